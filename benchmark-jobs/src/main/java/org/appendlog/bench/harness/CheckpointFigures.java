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

package org.appendlog.bench.harness;

import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.CheckpointStatsStatus;
import org.apache.flink.runtime.checkpoint.FailedCheckpointStats;

import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.List;
import java.util.function.ToLongFunction;

/**
 * What the job's checkpoints cost, read from Flink's own checkpoint statistics (the figures the web
 * UI shows): end-to-end duration, the synchronous part (the longest of any subtask: that is how
 * long a task stopped processing), the start delay (the longest any subtask's barrier took to reach
 * it: the part of the duration that the job's processing decides, not the backend), the
 * incremental size (what the checkpoint uploaded) and the full
 * size (the whole state it stands for).
 */
public final class CheckpointFigures {

    public final int completed;
    public final int failed;
    /** Why each failed checkpoint failed, as Flink reports it: "checkpoint N: message". */
    public final List<String> failures;
    /** Each completed checkpoint, in the order they were triggered. */
    public final List<CheckpointSample> samples;
    public final long durationP50Ms;
    public final long durationP99Ms;
    public final long syncP50Ms;
    public final long syncP99Ms;
    public final long startDelayP99Ms;
    public final long incrementalBytesAvg;
    public final long fullBytesAvg;
    public final long incrementalBytesTotal;

    private CheckpointFigures(List<String> failures, List<CheckpointSample> samples) {
        this.completed = samples.size();
        this.failed = failures.size();
        this.failures = failures;
        this.samples = samples;
        this.durationP50Ms = percentile(samples, s -> s.durationMs, 50);
        this.durationP99Ms = percentile(samples, s -> s.durationMs, 99);
        this.syncP50Ms = percentile(samples, s -> s.syncMs, 50);
        this.syncP99Ms = percentile(samples, s -> s.syncMs, 99);
        this.startDelayP99Ms = percentile(samples, s -> s.startDelayMs, 99);
        this.incrementalBytesTotal = samples.stream().mapToLong(s -> s.incrementalBytes).sum();
        this.incrementalBytesAvg = samples.isEmpty() ? -1 : incrementalBytesTotal / samples.size();
        this.fullBytesAvg =
                samples.isEmpty() ? -1 : samples.stream().mapToLong(s -> s.fullBytes).sum() / samples.size();
    }

    public static CheckpointFigures none() {
        return new CheckpointFigures(Collections.emptyList(), Collections.emptyList());
    }

    /**
     * The figures of the checkpoints that were triggered at or after {@code fromMillis} and ended
     * (completed or failed) by {@code toMillis} (epoch ms): those of the measured run, not of
     * whatever the harness does to the job after it (a full collection to take the live heap
     * stops every thread, and so delays the checkpoint then under way by as long).
     */
    public static CheckpointFigures of(CheckpointStatsSnapshot snapshot, long fromMillis, long toMillis) {
        List<String> failures = new ArrayList<>();
        List<CheckpointSample> samples = new ArrayList<>();
        for (AbstractCheckpointStats checkpoint : snapshot.getHistory().getCheckpoints()) {
            long triggered = checkpoint.getTriggerTimestamp();
            if (triggered < fromMillis
                    || checkpoint.getProperties().isSavepoint()
                    || checkpoint.getStatus() == CheckpointStatsStatus.IN_PROGRESS
                    || triggered + checkpoint.getEndToEndDuration() > toMillis) {
                continue;
            }
            if (checkpoint instanceof FailedCheckpointStats) {
                String reason = ((FailedCheckpointStats) checkpoint).getFailureMessage();
                // one line each, for the results' list
                failures.add(
                        "checkpoint "
                                + checkpoint.getCheckpointId()
                                + ": "
                                + (reason == null ? "no reason given" : reason.replaceAll("\\s+", " ")));
            }
            if (checkpoint.getStatus() == CheckpointStatsStatus.COMPLETED) {
                samples.add(new CheckpointSample(checkpoint, fromMillis));
            }
        }
        samples.sort(Comparator.comparingLong(sample -> sample.id));
        return new CheckpointFigures(failures, samples);
    }

    /** Nearest-rank percentile of one figure of the samples, or -1 if there are none. */
    private static long percentile(
            List<CheckpointSample> samples, ToLongFunction<CheckpointSample> figure, int percent) {
        if (samples.isEmpty()) {
            return -1;
        }
        long[] sorted = samples.stream().mapToLong(figure).sorted().toArray();
        int rank = (int) Math.ceil(percent / 100.0 * sorted.length);
        return sorted[Math.max(0, rank - 1)];
    }
}
