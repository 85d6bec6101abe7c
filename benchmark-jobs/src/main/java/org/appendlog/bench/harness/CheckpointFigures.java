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
import org.apache.flink.runtime.checkpoint.TaskStateStats;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

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
    public final long durationP50Ms;
    public final long durationP99Ms;
    public final long syncP50Ms;
    public final long syncP99Ms;
    public final long startDelayP99Ms;
    public final long incrementalBytesAvg;
    public final long fullBytesAvg;
    public final long incrementalBytesTotal;

    private CheckpointFigures(
            List<String> failures,
            List<Long> durations,
            List<Long> syncs,
            List<Long> startDelays,
            List<Long> incremental,
            List<Long> full) {
        this.completed = durations.size();
        this.failed = failures.size();
        this.failures = failures;
        this.durationP50Ms = percentile(durations, 50);
        this.durationP99Ms = percentile(durations, 99);
        this.syncP50Ms = percentile(syncs, 50);
        this.syncP99Ms = percentile(syncs, 99);
        this.startDelayP99Ms = percentile(startDelays, 99);
        this.incrementalBytesTotal = sum(incremental);
        this.incrementalBytesAvg = incremental.isEmpty() ? -1 : incrementalBytesTotal / incremental.size();
        this.fullBytesAvg = full.isEmpty() ? -1 : sum(full) / full.size();
    }

    public static CheckpointFigures none() {
        List<Long> empty = Collections.emptyList();
        return new CheckpointFigures(Collections.emptyList(), empty, empty, empty, empty, empty);
    }

    /** The figures of the checkpoints triggered at or after {@code fromMillis} (epoch ms). */
    public static CheckpointFigures of(CheckpointStatsSnapshot snapshot, long fromMillis) {
        List<String> failures = new ArrayList<>();
        List<Long> durations = new ArrayList<>();
        List<Long> syncs = new ArrayList<>();
        List<Long> startDelays = new ArrayList<>();
        List<Long> incremental = new ArrayList<>();
        List<Long> full = new ArrayList<>();
        for (AbstractCheckpointStats checkpoint : snapshot.getHistory().getCheckpoints()) {
            if (checkpoint.getTriggerTimestamp() < fromMillis || checkpoint.getProperties().isSavepoint()) {
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
            if (checkpoint.getStatus() != CheckpointStatsStatus.COMPLETED) {
                continue;
            }
            durations.add(checkpoint.getEndToEndDuration());
            long sync = 0;
            long startDelay = 0;
            for (TaskStateStats task : checkpoint.getAllTaskStateStats()) {
                TaskStateStats.TaskStateStatsSummary summary = task.getSummaryStats();
                sync = Math.max(sync, summary.getSyncCheckpointDurationStats().getMaximum());
                startDelay = Math.max(startDelay, summary.getCheckpointStartDelayStats().getMaximum());
            }
            syncs.add(sync);
            startDelays.add(startDelay);
            incremental.add(checkpoint.getCheckpointedSize());
            full.add(checkpoint.getStateSize());
        }
        return new CheckpointFigures(failures, durations, syncs, startDelays, incremental, full);
    }

    /** Nearest-rank percentile, or -1 if there are no values. */
    static long percentile(List<Long> values, int percent) {
        if (values.isEmpty()) {
            return -1;
        }
        List<Long> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int rank = (int) Math.ceil(percent / 100.0 * sorted.size());
        return sorted.get(Math.max(0, rank - 1));
    }

    private static long sum(List<Long> values) {
        long total = 0;
        for (long v : values) {
            total += v;
        }
        return total;
    }
}
