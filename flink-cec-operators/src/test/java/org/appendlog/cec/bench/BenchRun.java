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

package org.appendlog.cec.bench;

import org.apache.flink.api.common.JobID;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.groups.OperatorMetricGroup;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.checkpoint.StatsSummarySnapshot;
import org.apache.flink.runtime.testutils.InMemoryReporter;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The figures of one benchmark job: wall time, Flink's checkpoint statistics, the time from the
 * injected failure to caught-up, the CEC log's bytes on disk, and the window operator's metrics
 * summed or combined over its subtasks and attempts.
 */
final class BenchRun {

    final long events;
    final long millis;
    final long checkpoints;
    final long maxCheckpointBytes;
    /** End-to-end checkpoint durations, ms. */
    final StatsSummarySnapshot checkpointMillis;
    /** From the injected failure to caught-up, ms; -1 without a failure. */
    final long recoveryMillis;
    final long logBytes;
    private final List<Map<String, Metric>> attempts = new ArrayList<>();

    BenchRun(
            InMemoryReporter reporter, JobID job, long events, long millis, CheckpointStatsSnapshot stats,
            long recoveryMillis, long logBytes) {
        this.events = events;
        this.millis = millis;
        this.checkpoints = stats.getCounts().getNumberOfCompletedCheckpoints();
        this.maxCheckpointBytes = stats.getSummaryStats().getStateSizeStats().getMaximum();
        this.checkpointMillis = stats.getSummaryStats().getEndToEndDurationStats();
        this.recoveryMillis = recoveryMillis;
        this.logBytes = logBytes;
        for (OperatorMetricGroup group : reporter.findOperatorMetricGroups(job, BenchCluster.WINDOW)) {
            attempts.add(reporter.getMetricsByGroup(group));
        }
    }

    /** Input events per second of wall time, job submission to end. */
    double eventsPerSecond() {
        return events / (millis / 1000.0);
    }

    /** Over all subtasks and attempts (what a failed attempt wrote after its last checkpoint too). */
    long counter(String name) {
        return attempts.stream().mapToLong(g -> g.containsKey(name) ? ((Counter) g.get(name)).getCount() : 0).sum();
    }

    long gaugeMax(String name) {
        return attempts.stream().mapToLong(g -> gauge(g, name)).max().orElse(0);
    }

    long gaugeSum(String name) {
        return attempts.stream().mapToLong(g -> gauge(g, name)).sum();
    }

    /** The values a histogram of every subtask and attempt holds (its last 1 000 each), sorted. */
    long[] histogramValues(String name) {
        return attempts.stream()
                .filter(g -> g.containsKey(name))
                .flatMapToLong(g -> Arrays.stream(((Histogram) g.get(name)).getStatistics().getValues()))
                .sorted()
                .toArray();
    }

    /** The {@code q} quantile (nearest rank) of sorted values, or -1 if there are none. */
    static long quantile(long[] sorted, double q) {
        if (sorted.length == 0) {
            return -1;
        }
        int rank = (int) Math.ceil(q * sorted.length);
        return sorted[Math.max(0, Math.min(sorted.length, rank) - 1)];
    }

    private static long gauge(Map<String, Metric> group, String name) {
        Metric m = group.get(name);
        return m == null ? 0 : ((Number) ((Gauge<?>) m).getValue()).longValue();
    }
}
