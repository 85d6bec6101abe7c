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

package org.appendlog.statebackend;

import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;

import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.concurrent.atomic.LongAdder;

/**
 * Passes records through and throws once per test, mid-stream: only after a checkpoint that
 * covers at least {@code recordsBeforeCheckpoint} records of this subtask has completed, and
 * {@code recordsAfterCheckpoint} records later, so the restore has real state to bring back and
 * real records to replay. Counts, for the test, the records that passed through it per attempt
 * (those of the attempt after the restore are what the restored sources emitted after the
 * checkpoint), those each checkpoint covers and where it failed.
 */
public class FailOnce extends RichMapFunction<Long, Long>
        implements CheckpointedFunction, CheckpointListener {

    private static final AtomicBoolean FAILED = new AtomicBoolean();
    private static final AtomicLong FAILED_AT = new AtomicLong();
    private static final Map<Integer, LongAdder> PASSED_PER_ATTEMPT = new ConcurrentHashMap<>();
    private static final Map<Long, Long> COVERED = new ConcurrentHashMap<>();

    private final long recordsBeforeCheckpoint;
    private final long recordsAfterCheckpoint;

    private transient long processed;
    private transient Map<Long, Long> processedAtCheckpoint;
    private transient long armedAt;
    private transient LongAdder passedThisAttempt;

    public FailOnce(long recordsBeforeCheckpoint, long recordsAfterCheckpoint) {
        this.recordsBeforeCheckpoint = recordsBeforeCheckpoint;
        this.recordsAfterCheckpoint = recordsAfterCheckpoint;
    }

    /**
     * Passes every record through and never fails (no checkpoint covers that many records): the
     * same operator in a job that must not fail, so that its graph stays that of the failing one.
     */
    public static FailOnce never() {
        return new FailOnce(Long.MAX_VALUE, 0);
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {
        processedAtCheckpoint = new HashMap<>();
        armedAt = -1;
        passedThisAttempt =
                PASSED_PER_ATTEMPT.computeIfAbsent(
                        getRuntimeContext().getTaskInfo().getAttemptNumber(), a -> new LongAdder());
    }

    @Override
    public Long map(Long value) {
        processed++;
        if (armedAt >= 0
                && processed >= armedAt + recordsAfterCheckpoint
                && FAILED.compareAndSet(false, true)) {
            FAILED_AT.set(processed);
            throw new IllegalStateException(
                    "Failure injected by the test after " + processed + " records");
        }
        passedThisAttempt.increment();
        return value;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) {
        processedAtCheckpoint.put(context.getCheckpointId(), processed);
        COVERED.merge(context.getCheckpointId(), processed, Long::sum);
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        Long covered = processedAtCheckpoint.remove(checkpointId);
        if (armedAt < 0 && covered != null && covered >= recordsBeforeCheckpoint) {
            armedAt = processed;
        }
    }

    static boolean hasFailed() {
        return FAILED.get();
    }

    /** The failing subtask's count of records, the one it failed at included; 0 before. */
    static long failedAtRecord() {
        return FAILED_AT.get();
    }

    /** Records passed on (not the one failed at), by all subtasks and attempts since the reset. */
    static long passedRecords() {
        return PASSED_PER_ATTEMPT.values().stream().mapToLong(LongAdder::sum).sum();
    }

    /** The records that subtasks of attempt {@code attempt} passed on, since the last reset. */
    static long passed(int attempt) {
        LongAdder passed = PASSED_PER_ATTEMPT.get(attempt);
        return passed == null ? 0 : passed.sum();
    }

    /**
     * The records that checkpoint or savepoint {@code checkpointId} covers, of all subtasks (those
     * each counted when it took its snapshot); null if none took one.
     */
    static Long recordsCoveredBy(long checkpointId) {
        return COVERED.get(checkpointId);
    }

    static void reset() {
        FAILED.set(false);
        FAILED_AT.set(0);
        PASSED_PER_ATTEMPT.clear();
        COVERED.clear();
    }
}
