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

import org.appendlog.cec.SumCount;
import org.appendlog.cec.api.CecMode;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecWindowedStream;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.cec.operator.CecMetrics;

import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.FlatMapFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.groups.OperatorMetricGroup;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.SlidingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.function.Function;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs the CEC operator and Flink's own {@code WindowOperator} side by side on the same keyed
 * input in one job and compares their results, for every supported window kind and every
 * {@link CecMode}.
 */
class CecMatchesWindowOperatorTest {

    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    () -> new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .setConfiguration(REPORTER.addToConfiguration(new Configuration()))
                            .build());

    @TempDir File tmp;

    /** Out-of-order events; every 40th is far behind the watermark (late). */
    private static List<Tuple3<String, Long, Long>> events() {
        Random random = new Random(7);
        List<Tuple3<String, Long, Long>> events = new ArrayList<>();
        for (int i = 0; i < 4000; i++) {
            long ts = i * 5L + random.nextInt(300);
            if (i % 40 == 39) {
                ts -= 3000;
            }
            events.add(Tuple3.of("w" + random.nextInt(25), Math.max(0, ts), (long) random.nextInt(100)));
        }
        return events;
    }

    /** A watermark after every event (deterministic, unlike periodic watermarks): max seen - 400 ms. */
    private static WatermarkStrategy<Tuple3<String, Long, Long>> punctuated() {
        return WatermarkStrategy.<Tuple3<String, Long, Long>>forGenerator(
                        ctx -> new WatermarkGenerator<Tuple3<String, Long, Long>>() {
                            private long max = Long.MIN_VALUE + 400;

                            @Override
                            public void onEvent(Tuple3<String, Long, Long> e, long ts, WatermarkOutput out) {
                                max = Math.max(max, ts);
                                out.emitWatermark(new Watermark(max - 400));
                            }

                            @Override
                            public void onPeriodicEmit(WatermarkOutput out) {}
                        })
                .withTimestampAssigner((e, ts) -> e.f1);
    }

    private DataStream<Tuple3<String, Long, Long>> eventTimeInput(StreamExecutionEnvironment env) {
        return env.fromData(events()).setParallelism(1).assignTimestampsAndWatermarks(punctuated()).setParallelism(1);
    }

    @ParameterizedTest
    @EnumSource(CecMode.class)
    void tumblingEventTime(CecMode mode) throws Exception {
        Outcome o = runBoth(mode, eventTimeInput(env()),
                k -> k.window(TumblingEventTimeWindows.of(Duration.ofSeconds(1))),
                c -> c.window(TumblingEventTimeWindows.of(Duration.ofSeconds(1))));
        o.assertSame(true);
        assertThat(o.flinkLate).as("the input has late records").isGreaterThan(0);
    }

    @ParameterizedTest
    @EnumSource(CecMode.class)
    void slidingEventTime(CecMode mode) throws Exception {
        Outcome o = runBoth(mode, eventTimeInput(env()),
                k -> k.window(SlidingEventTimeWindows.of(Duration.ofSeconds(2), Duration.ofMillis(500))),
                c -> c.window(SlidingEventTimeWindows.of(Duration.ofSeconds(2), Duration.ofMillis(500))));
        o.assertSame(true);
    }

    @ParameterizedTest
    @EnumSource(CecMode.class)
    void countWindowsPerKey(CecMode mode) throws Exception {
        Outcome o = runBoth(mode, eventTimeInput(env()), k -> k.countWindow(7), c -> c.countWindow(7));
        o.assertSame(false);
    }

    @ParameterizedTest
    @EnumSource(CecMode.class)
    void tumblingProcessingTime(CecMode mode) throws Exception {
        Outcome o = runBoth(mode, pacedInput(env()),
                k -> k.window(TumblingProcessingTimeWindows.of(Duration.ofSeconds(1))),
                c -> c.window(TumblingProcessingTimeWindows.of(Duration.ofSeconds(1))));
        o.assertSame(false);
    }

    @ParameterizedTest
    @EnumSource(CecMode.class)
    void slidingProcessingTime(CecMode mode) throws Exception {
        Outcome o = runBoth(mode, pacedInput(env()),
                k -> k.window(SlidingProcessingTimeWindows.of(Duration.ofSeconds(2), Duration.ofSeconds(1))),
                c -> c.window(SlidingProcessingTimeWindows.of(Duration.ofSeconds(2), Duration.ofSeconds(1))));
        o.assertSame(false);
    }

    private static StreamExecutionEnvironment env() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(300);
        return env;
    }

    /**
     * Bursts of 200 events, each burst 300 ms after a whole second of processing time, then a wait
     * of three seconds so that every window fires before the input ends. Both operators see a burst
     * within the same second, well away from the window boundaries.
     */
    private static DataStream<Tuple3<String, Long, Long>> pacedInput(StreamExecutionEnvironment env) {
        return env.fromSequence(0, 5 * 200 - 1)
                .setParallelism(1)
                .flatMap((FlatMapFunction<Long, Tuple3<String, Long, Long>>) (i, out) -> {
                    if (i % 200 == 0) {
                        long now = System.currentTimeMillis();
                        Thread.sleep(1000 - now % 1000 + 300);
                    }
                    out.collect(Tuple3.of("w" + (i * 7919 % 13), 0L, i % 97));
                    if (i == 5 * 200 - 1) {
                        Thread.sleep(3000);
                    }
                })
                .returns(Types.TUPLE(Types.STRING, Types.LONG, Types.LONG))
                .setParallelism(1);
    }

    private <W extends Window> Outcome runBoth(
            CecMode mode,
            DataStream<Tuple3<String, Long, Long>> input,
            Function<KeyedStream<Tuple3<String, Long, Long>, String>, WindowedStream<Tuple3<String, Long, Long>, String, W>> flinkWindow,
            Function<CecWindows<Tuple3<String, Long, Long>, String>, CecWindowedStream<Tuple3<String, Long, Long>, String, W>> cecWindow)
            throws Exception {
        KeyedStream<Tuple3<String, Long, Long>, String> keyed = input.keyBy(e -> e.f0);
        DataStream<String> flink =
                flinkWindow.apply(keyed)
                        .aggregate(new SumCount(), new ProcessWindowFunction<String, String, String, W>() {
                            @Override
                            public void process(String key, Context ctx, Iterable<String> values, Collector<String> out) {
                                for (String v : values) {
                                    out.collect("flink|" + key + "|" + ctx.window() + "|" + v + "|" + ctx.window().maxTimestamp());
                                }
                            }
                        })
                        .name("flink-window");
        DataStream<CecRecord<String, W, org.apache.flink.api.java.tuple.Tuple2<Long, Long>, String>> cec =
                cecWindow.apply(CecWindows.of(keyed))
                        .aggregate(new SumCount(), CecOptions.builder(tmp.toURI().toString()).mode(mode).period(Duration.ofMillis(50))
                                .slowThreshold(Duration.ofMillis(100)).build())
                        .name("cec-window");
        DataStream<String> cecResults =
                CecWindows.results(cec)
                        .map(r -> "cec|" + r.getKey() + "|" + r.getWindow() + "|" + r.getValue() + "|" + r.getTimestamp())
                        .returns(Types.STRING);
        Outcome outcome = new Outcome();
        StreamExecutionEnvironment env = input.getExecutionEnvironment();
        try (CloseableIterator<String> it = flink.union(cecResults).collectAsync()) {
            JobClient client = env.executeAsync();
            it.forEachRemaining(line -> (line.startsWith("flink|") ? outcome.flink : outcome.cec).add(line.substring(line.indexOf('|') + 1)));
            client.getJobExecutionResult().get();
            outcome.flinkLate = lateDropped(client, "flink-window");
            outcome.cecLate = lateDropped(client, "cec-window");
        }
        return outcome;
    }

    private static long lateDropped(JobClient client, String operator) {
        long sum = 0;
        for (OperatorMetricGroup group : REPORTER.findOperatorMetricGroups(client.getJobID(), operator)) {
            Map<String, Metric> metrics = REPORTER.getMetricsByGroup(group);
            sum += ((Counter) metrics.get(CecMetrics.LATE_RECORDS_DROPPED)).getCount();
        }
        return sum;
    }

    private static final class Outcome {
        final List<String> flink = new ArrayList<>();
        final List<String> cec = new ArrayList<>();
        long flinkLate;
        long cecLate;

        /** Compares results; with {@code withTimestamps} also each result's timestamp (window end - 1). */
        void assertSame(boolean withTimestamps) {
            List<String> f = strip(flink, withTimestamps);
            List<String> c = strip(cec, withTimestamps);
            assertThat(f).as("Flink's WindowOperator produced results").hasSizeGreaterThan(10);
            assertThat(c).containsExactlyInAnyOrderElementsOf(f);
            assertThat(cecLate).as("late records dropped by CEC vs Flink").isEqualTo(flinkLate);
        }

        private static List<String> strip(List<String> lines, boolean withTimestamps) {
            List<String> out = new ArrayList<>();
            for (String l : lines) {
                out.add(withTimestamps ? l : l.substring(0, l.lastIndexOf('|')));
            }
            return out;
        }
    }
}
