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

package org.appendlog.cec.operator;

import org.appendlog.cec.CecMiniCluster;
import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecWindows;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.executiongraph.AccessExecutionGraph;
import org.apache.flink.runtime.executiongraph.AccessExecutionJobVertex;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The Flink checkpoint of a CEC operator holds only (log position, n, clocks) per subtask, so its
 * size does not change when the number of open windows grows from 1 000 to 100 000. Flink's own
 * window operator on the {@code hashmap} backend is measured the same way for contrast.
 */
class CecCheckpointSizeTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = CecMiniCluster.withFourSlots();

    static final AtomicLong SEEN = new AtomicLong();

    @TempDir File tmp;

    @Test
    void cecCheckpointSizeIsIndependentOfOpenWindows(@InjectMiniCluster MiniCluster cluster) throws Exception {
        long small = checkpointedBytesWithOpenWindows(cluster, 1_000, true);
        long large = checkpointedBytesWithOpenWindows(cluster, 100_000, true);
        System.out.printf("CEC checkpoint state: %d bytes at 1 000 open windows, %d bytes at 100 000%n", small, large);
        assertThat(small).as("CEC state at 1 000 open windows").isPositive();
        assertThat(large).as("CEC state at 100 000 open windows equals the state at 1 000").isEqualTo(small);
    }

    @Test
    void flinkWindowOperatorCheckpointGrowsWithOpenWindows(@InjectMiniCluster MiniCluster cluster) throws Exception {
        long small = checkpointedBytesWithOpenWindows(cluster, 1_000, false);
        long large = checkpointedBytesWithOpenWindows(cluster, 100_000, false);
        System.out.printf("WindowOperator checkpoint state: %d bytes at 1 000 open windows, %d bytes at 100 000%n", small, large);
        assertThat(large).as("WindowOperator state grows with open windows").isGreaterThan(20 * small);
    }

    /**
     * Opens {@code windows} windows (one per key, in a one-day event-time window that never
     * closes during the run), waits for a checkpoint that was taken after all of them were open,
     * and returns the window vertex's state size in that checkpoint.
     */
    private long checkpointedBytesWithOpenWindows(MiniCluster cluster, int windows, boolean cec) throws Exception {
        SEEN.set(0);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(100);
        DataGeneratorSource<Tuple2<String, Long>> source =
                new DataGeneratorSource<>(
                        i -> Tuple2.of("k" + (i % windows), 1_000L),
                        Long.MAX_VALUE,
                        RateLimiterStrategy.perSecond(100_000),
                        Types.TUPLE(Types.STRING, Types.LONG));
        KeyedStream<Tuple2<String, Long>, String> keyed =
                env.fromSource(
                                source,
                                WatermarkStrategy.<Tuple2<String, Long>>forMonotonousTimestamps()
                                        .withTimestampAssigner((e, ts) -> e.f1),
                                "keys")
                        .setParallelism(1)
                        .map(new CountSeen())
                        .setParallelism(1)
                        .keyBy(e -> e.f0);
        TumblingEventTimeWindows day = TumblingEventTimeWindows.of(Duration.ofDays(1));
        if (cec) {
            CecWindows.of(keyed)
                    .window(day)
                    .aggregate(new WordCountJob.Count(), CecOptions.builder(new File(tmp, "w" + windows).toURI().toString()).build())
                    .name("windows-under-test")
                    .addSink(new DiscardingSink<>());
        } else {
            keyed.window(day).aggregate(new WordCountJob.Count()).name("windows-under-test").addSink(new DiscardingSink<>());
        }
        JobClient client = env.executeAsync();
        try {
            JobID job = client.getJobID();
            while (SEEN.get() < windows) {
                Thread.sleep(20);
            }
            long before = latestCompleted(cluster, job) == null ? 0 : latestCompleted(cluster, job).getCheckpointId();
            CompletedCheckpointStats after;
            do {
                Thread.sleep(50);
                after = latestCompleted(cluster, job);
            } while (after == null || after.getCheckpointId() < before + 2);
            AccessExecutionGraph graph = cluster.getExecutionGraph(job).get();
            for (AccessExecutionJobVertex vertex : graph.getAllVertices().values()) {
                if (vertex.getName().contains("windows-under-test")) {
                    return after.getTaskStateStats(vertex.getJobVertexId()).getStateSize();
                }
            }
            throw new AssertionError("no window vertex in " + graph.getAllVertices().values());
        } finally {
            client.cancel().get();
            // The request returns before the tasks stop; they write into tmp until the job ends.
            client.getJobExecutionResult().handle((result, failure) -> null).get();
        }
    }

    private static CompletedCheckpointStats latestCompleted(MiniCluster cluster, JobID job) throws Exception {
        return cluster.getExecutionGraph(job).get().getCheckpointStatsSnapshot().getHistory().getLatestCompletedCheckpoint();
    }

    /** Counts records leaving the source, so the test knows when every key has been sent. */
    static final class CountSeen implements MapFunction<Tuple2<String, Long>, Tuple2<String, Long>> {
        @Override
        public Tuple2<String, Long> map(Tuple2<String, Long> value) {
            SEEN.incrementAndGet();
            return value;
        }
    }
}
