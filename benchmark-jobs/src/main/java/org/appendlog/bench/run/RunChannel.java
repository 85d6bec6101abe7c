/*
 * Copyright AppendLog contributors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package org.appendlog.bench.run;

import java.util.HashMap;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.AtomicLongArray;

/**
 * The in-JVM side channel between one running benchmark job and whoever started it (the harness
 * or a job's {@code main}): the job's operators report progress and results here, the starter
 * asks the sources to stop or to fail. It works because the jobs run on a Flink MiniCluster in the
 * same JVM; channels are looked up by a run id that travels with the job's functions.
 */
public final class RunChannel {

    private static final Map<String, RunChannel> OPEN = new ConcurrentHashMap<>();

    private final String runId;
    private final AtomicLong processed = new AtomicLong();
    private final ConcurrentLinkedQueue<Long> instanceFirstRecordNanos =
            new ConcurrentLinkedQueue<>();
    private final AtomicBoolean failureArmed = new AtomicBoolean();
    private final AtomicLong failureNanos = new AtomicLong();
    private final Map<Integer, Long> endOffsets = new ConcurrentHashMap<>();
    private final AtomicLongArray latestCounts;
    private final Map<Long, long[]> topKByWindowEnd = new ConcurrentHashMap<>();
    private final Map<String, TreeMap<Long, Runnable>> staged = new HashMap<>();
    private volatile boolean stopRequested;

    private RunChannel(String runId, int vocabulary) {
        this.runId = runId;
        this.latestCounts = new AtomicLongArray(vocabulary);
    }

    /** Opens the channel of a new run; {@code vocabulary} sizes the word-count result table. */
    public static RunChannel open(String runId, int vocabulary) {
        RunChannel channel = new RunChannel(runId, vocabulary);
        if (OPEN.putIfAbsent(runId, channel) != null) {
            throw new IllegalStateException("A benchmark run with id " + runId + " is already open");
        }
        return channel;
    }

    public static RunChannel of(String runId) {
        RunChannel channel = OPEN.get(runId);
        if (channel == null) {
            throw new IllegalStateException(
                    "No benchmark run '"
                            + runId
                            + "' in this JVM: the benchmark jobs report to the program that"
                            + " started them, so run them through org.appendlog.bench.Bench or"
                            + " their own main (in-JVM MiniCluster), not on a remote cluster.");
        }
        return channel;
    }

    public void close() {
        OPEN.remove(runId, this);
    }

    public String runId() {
        return runId;
    }

    // ---- progress ----

    void addProcessed(long records) {
        processed.addAndGet(records);
    }

    void markInstanceFirstRecord(long nanos) {
        instanceFirstRecordNanos.add(nanos);
    }

    /** Records processed by the stateful operators so far, over all attempts. */
    public long processed() {
        return processed.get();
    }

    /**
     * When the first operator instance that started after {@code nanos} processed its first
     * record, or -1 if none has yet. After a failure every operator is a new instance, so this is
     * the first record processed after the recovery.
     */
    public long firstRecordAfter(long nanos) {
        long first = -1;
        for (long t : instanceFirstRecordNanos) {
            if (t > nanos && (first < 0 || t < first)) {
                first = t;
            }
        }
        return first;
    }

    // ---- control ----

    public void requestStop() {
        stopRequested = true;
    }

    public boolean stopRequested() {
        return stopRequested;
    }

    /** Makes one source instance throw on its next record. */
    public void armFailure() {
        failureArmed.set(true);
    }

    /** True exactly once after {@link #armFailure()}; remembers when the failure was taken. */
    public boolean takeFailure() {
        if (failureArmed.compareAndSet(true, false)) {
            failureNanos.set(System.nanoTime());
            return true;
        }
        return false;
    }

    /** When the injected failure happened (System.nanoTime), or 0 if it has not. */
    public long failureNanos() {
        return failureNanos.get();
    }

    // ---- results: committed with the checkpoints, like a transactional sink's ----

    /**
     * Stages the output that sink instance {@code sink} produced before the barrier of {@code
     * checkpointId}; it becomes a result only when that checkpoint is committed.
     */
    public synchronized void stage(String sink, long checkpointId, Runnable output) {
        staged.computeIfAbsent(sink, s -> new TreeMap<>()).merge(checkpointId, output, (a, b) -> () -> {
            a.run();
            b.run();
        });
    }

    /** Applies, in checkpoint order, the output staged by {@code sink} up to {@code checkpointId}. */
    public synchronized void commit(String sink, long checkpointId) {
        TreeMap<Long, Runnable> pending = staged.get(sink);
        if (pending == null) {
            return;
        }
        Map<Long, Runnable> due = pending.headMap(checkpointId, true);
        due.values().forEach(Runnable::run);
        due.clear();
    }

    /**
     * After a restore from {@code checkpointId}: commits what that checkpoint covered (its
     * notification may have been lost in the failure) and drops later output, which the restored
     * job produces again.
     */
    public synchronized void restored(String sink, long checkpointId) {
        commit(sink, checkpointId);
        TreeMap<Long, Runnable> pending = staged.get(sink);
        if (pending != null) {
            pending.clear();
        }
    }

    public void sourceFinished(int subtask, long emitted) {
        endOffsets.put(subtask, emitted);
    }

    /** Per source subtask, how many records its last attempt had emitted when it finished. */
    public long[] endOffsets(int parallelism) {
        long[] offsets = new long[parallelism];
        for (int i = 0; i < parallelism; i++) {
            Long end = endOffsets.get(i);
            if (end == null) {
                throw new IllegalStateException("Source subtask " + i + " did not finish");
            }
            offsets[i] = end;
        }
        return offsets;
    }

    public void latestCount(int wordId, long count) {
        latestCounts.set(wordId, count);
    }

    public long latestCount(int wordId) {
        return latestCounts.get(wordId);
    }

    public void topK(long windowEnd, long[] entries) {
        topKByWindowEnd.put(windowEnd, entries);
    }

    public Map<Long, long[]> topKByWindowEnd() {
        return topKByWindowEnd;
    }
}
