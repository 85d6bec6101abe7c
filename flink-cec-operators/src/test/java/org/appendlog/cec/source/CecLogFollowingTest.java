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

package org.appendlog.cec.source;

import org.appendlog.cec.CecMiniCluster;
import org.appendlog.cec.CommittedResults;
import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecConfigOptions;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.statebackend.faults.ReliabilityLog;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link CecLogSource#following}: a reader started while the writing job runs, and before its
 * stream directory exists, returns exactly the committed RESULTs, none twice, although the
 * writing job fails once after its CEC operator wrote RESULTs past the last checkpoint, which the
 * restarted job writes again; its lag metric goes to 0 once the writer has finished.
 */
class CecLogFollowingTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("cec-log-following");
    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            CecMiniCluster.withFourSlots(REPORTER.addToConfiguration(new Configuration()));

    private static final long EVENTS = 24_000;
    private static final int FAIL_AT_RESULT = 400;

    /** RESULTs the CEC subtasks forwarded (each after appending it to the log), over all attempts. */
    static final AtomicInteger RESULTS_FORWARDED = new AtomicInteger();
    static final AtomicInteger FAILURES = new AtomicInteger();
    /** What the following reader returned. */
    static final Queue<String> FOLLOWED = new ConcurrentLinkedQueue<>();

    @TempDir File tmp;

    @Test
    void aLiveReaderReturnsExactlyTheCommittedResultsAcrossAFailureOfTheWriter() throws Exception {
        String path = new File(tmp, "stream").toURI().toString();
        StreamExecutionEnvironment writer = StreamExecutionEnvironment.getExecutionEnvironment();
        writer.setParallelism(2);
        writer.enableCheckpointing(200);
        writer.setRestartStrategy(RestartStrategies.fixedDelayRestart(3, 100));
        DataStream<CecRecord<String, TimeWindow, Long, Long>> counts =
                WordCountJob.cecCounts(
                        WordCountJob.words(writer, EVENTS, 30, 5, 4_000),
                        WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1)),
                        CecOptions.builder(path)
                                .period(Duration.ofMillis(50))
                                .slowThreshold(Duration.ofMillis(100))
                                .set(CecConfigOptions.LOG_SEGMENT_SIZE, MemorySize.parse("16kb"))
                                .build());
        TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type = counts.getType();
        CecWindows.results(counts).map(new FailAtResult()).addSink(new DiscardingSink<>());

        StreamExecutionEnvironment follower = StreamExecutionEnvironment.getExecutionEnvironment();
        follower.setParallelism(2);
        follower.fromSource(CecLogSource.following(path, type, Long.MIN_VALUE), WatermarkStrategy.noWatermarks(), "live")
                .filter(CecRecord::isResult)
                .map(r -> CommittedResults.describe(r.getKey(), r.getWindow(), r.getValue()))
                .returns(String.class)
                .addSink(new Collect());

        long start = System.nanoTime();
        // The reader starts first: the stream's directory does not exist yet.
        JobClient reading = follower.executeAsync("follow");
        JobClient writing = writer.executeAsync("write");
        writing.getJobExecutionResult().get();

        StreamExecutionEnvironment history = StreamExecutionEnvironment.getExecutionEnvironment();
        history.setParallelism(2); // the two other slots run the live reader
        List<String> committed =
                CommittedResults.readDescribed(new File(tmp, "stream"), type, history).stream().sorted()
                        .collect(Collectors.toList());
        long lag = awaitCaughtUp(reading.getJobID(), committed.size());
        List<String> followed = FOLLOWED.stream().sorted().collect(Collectors.toList());
        reading.cancel().get();
        System.out.printf(
                "following: %d committed RESULTs, %d followed, %d forwarded by the writer over %d attempts, %.1f s%n",
                committed.size(), followed.size(), RESULTS_FORWARDED.get(), FAILURES.get() + 1,
                (System.nanoTime() - start) / 1e9);

        assertThat(FAILURES.get()).as("injected failures").isEqualTo(1);
        // The failed attempt wrote RESULTs after its last checkpoint; the restarted one wrote them again.
        assertThat(RESULTS_FORWARDED.get()).as("RESULTs forwarded over both attempts").isGreaterThan(committed.size());
        assertThat(committed).hasSizeGreaterThan(1000).doesNotHaveDuplicates();
        assertThat(followed).as("RESULTs the live reader returned").isEqualTo(committed);
        assertThat(lag).as("lag once caught up").isZero();
        RELIABILITY.record(
                "writer fails after its " + FAIL_AT_RESULT + "th RESULT, a live reader follows",
                "the reader returned exactly the " + committed.size() + " committed RESULTs, none twice, while the"
                        + " writer forwarded " + RESULTS_FORWARDED.get() + " over both attempts; lag metric 0 at the end");
    }

    /** Waits until the reader returned {@code expected} RESULTs and its lag gauge shows 0, then a bit more; returns the lag. */
    private static long awaitCaughtUp(JobID reader, int expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        long lag = -1;
        while (System.nanoTime() < deadline) {
            lag = lagBytes(reader);
            if (FOLLOWED.size() >= expected && lag == 0) {
                break;
            }
            Thread.sleep(100);
        }
        // Anything the reader would return twice or from a failed attempt's tail would come now.
        Thread.sleep(3 * CecLogSplitReader.POLL_MILLIS + CecLogFollowingEnumerator.DISCOVERY_MILLIS);
        return lag;
    }

    /** The sum of the readers' {@link CecLogSourceMetrics#LAG_BYTES} gauges, or -1 before they exist. */
    private static long lagBytes(JobID reader) {
        long sum = 0;
        int gauges = 0;
        for (Map.Entry<String, Metric> metric : REPORTER.getMetricsByIdentifiers(reader).entrySet()) {
            if (metric.getKey().endsWith("." + CecLogSourceMetrics.LAG_BYTES)) {
                sum += (Long) ((Gauge<?>) metric.getValue()).getValue();
                gauges++;
            }
        }
        return gauges == 2 ? sum : -1;
    }

    /** Fails the first attempt at its {@link #FAIL_AT_RESULT}th RESULT, which the log already holds. */
    static final class FailAtResult implements MapFunction<CecRecord<String, TimeWindow, Long, Long>, String> {
        @Override
        public String map(CecRecord<String, TimeWindow, Long, Long> r) {
            if (RESULTS_FORWARDED.incrementAndGet() == FAIL_AT_RESULT && FAILURES.compareAndSet(0, 1)) {
                throw new RuntimeException("Injected failure at RESULT " + FAIL_AT_RESULT);
            }
            return r.toString();
        }
    }

    static final class Collect implements SinkFunction<String> {
        @Override
        public void invoke(String value, Context context) {
            FOLLOWED.add(value);
        }
    }
}
