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

package org.appendlog.bench.jobs;

import org.appendlog.bench.generator.EmittedRecords;
import org.appendlog.bench.generator.Words;
import org.appendlog.bench.run.CommittingSink;
import org.appendlog.bench.run.ProcessedCounter;
import org.appendlog.bench.run.RunChannel;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.PrimitiveArrayTypeInfo;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.tuple.Tuple3;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.util.Collector;

import java.time.Duration;
import java.util.Arrays;
import java.util.HashMap;
import java.util.Map;

/**
 * Tumbling event-time windows count each word (Flink's window operator, so the counts live in
 * namespaced keyed state), then a second keyed stage, keyed by window, keeps the top K words of
 * each window and emits them when the watermark passes the window's end. Event time is the
 * record number, so the window contents, and so every window's top K, follow from the generator.
 */
public final class TopK extends BenchJob {

    private static final String COUNTING = "count-per-window";

    public static void main(String[] args) throws Exception {
        JobMain.run(new TopK(), args);
    }

    public TopK() {
        super("topk", COUNTING);
    }

    @Override
    public void build(StreamExecutionEnvironment env, JobSpec spec, String runId) {
        BenchJob.words(env, spec, runId)
                // the source stamps each record with its record number; watermarks follow it
                .assignTimestampsAndWatermarks(WatermarkStrategy.<String>forMonotonousTimestamps())
                .name("watermarks")
                .uid("watermarks")
                .keyBy(word -> word)
                .window(TumblingEventTimeWindows.of(Duration.ofMillis(spec.windowRecords)))
                .aggregate(new CountInWindow(runId), new WindowCount())
                .name(COUNTING)
                .uid(COUNTING)
                .keyBy(count -> count.f1)
                .process(new TopKPerWindow(spec.topK))
                .name("top-k-per-window")
                .uid("top-k-per-window")
                .addSink(new TopKSink(runId))
                .name("top-k")
                .uid("top-k");
    }

    /**
     * After the first pass and once the windows it filled have fired: a window of the first pass
     * holds a window's worth of distinct words, several times a steady window's, and firing it
     * stops the operator for seconds, which a checkpoint of the measured run would otherwise wait
     * behind. Once every record of the next window is processed, so are the watermarks that fired
     * them (they come every 200 ms, a small part of a window).
     */
    @Override
    public long steadyStateRecords(JobSpec spec) {
        long firstPass = spec.generator.firstPassRecords();
        long windowsTouched = (firstPass + spec.windowRecords - 1) / spec.windowRecords;
        return firstPass == 0 ? 0 : (windowsTouched + 1) * spec.windowRecords;
    }

    @Override
    public Verification verify(JobSpec spec, RunChannel channel) {
        int vocabulary = spec.generator.vocabulary();
        long[] counts = new long[vocabulary];
        int[] touched = new int[vocabulary];
        int[] touchedCount = {0};
        long[] window = {-1};
        int[] windows = {0};
        int[] wrong = {0};
        int[] missing = {0};
        StringBuilder example = new StringBuilder();
        Map<Long, long[]> actual = channel.topKByWindowEnd();

        Runnable closeWindow =
                () -> {
                    long[] top = TopKEntries.EMPTY;
                    for (int i = 0; i < touchedCount[0]; i++) {
                        int id = touched[i];
                        top = TopKEntries.insert(top, spec.topK, id, counts[id]);
                        counts[id] = 0;
                    }
                    touchedCount[0] = 0;
                    long end = (window[0] + 1) * spec.windowRecords;
                    windows[0]++;
                    long[] got = actual.get(end);
                    if (got == null) {
                        missing[0]++;
                    }
                    if (got == null || !Arrays.equals(got, top)) {
                        if (wrong[0]++ == 0) {
                            example.append(", e.g. window ending at ")
                                    .append(end)
                                    .append(" expected ")
                                    .append(TopKEntries.format(top))
                                    .append(" got ")
                                    .append(got == null ? "nothing" : TopKEntries.format(got));
                        }
                    }
                };
        long records =
                EmittedRecords.replay(
                        spec.generator,
                        channel.endOffsets(spec.parallelism),
                        (g, wordId) -> {
                            long w = g / spec.windowRecords;
                            if (w != window[0]) {
                                if (window[0] >= 0) {
                                    closeWindow.run();
                                }
                                window[0] = w;
                            }
                            if (counts[wordId]++ == 0) {
                                touched[touchedCount[0]++] = wordId;
                            }
                        });
        if (window[0] >= 0) {
            closeWindow.run();
        }
        int extra = actual.size() - (windows[0] - missing[0]);
        String counted = records + " records in " + windows[0] + " windows, top " + spec.topK;
        if (wrong[0] == 0 && extra == 0) {
            return Verification.passed("top-K of every window equals the generator's (" + counted + ")");
        }
        return Verification.failed(
                wrong[0] + " windows have a wrong or no top-K, " + extra
                        + " windows were emitted that the generator did not produce" + example
                        + " (" + counted + ")");
    }

    /** Counts a word's records in a window; counting here marks them processed by the window operator. */
    static final class CountInWindow implements AggregateFunction<String, Long, Long> {

        private static final long serialVersionUID = 1L;

        private final ProcessedCounter processed;

        CountInWindow(String runId) {
            this.processed = new ProcessedCounter(runId);
        }

        @Override
        public Long createAccumulator() {
            return 0L;
        }

        @Override
        public Long add(String word, Long count) {
            processed.count();
            return count + 1;
        }

        @Override
        public Long getResult(Long count) {
            return count;
        }

        @Override
        public Long merge(Long a, Long b) {
            return a + b;
        }
    }

    /** Emits (word, window end, count) when a word's window fires. */
    static final class WindowCount
            extends ProcessWindowFunction<Long, Tuple3<String, Long, Long>, String, TimeWindow> {

        private static final long serialVersionUID = 1L;

        @Override
        public void process(
                String word,
                Context context,
                Iterable<Long> counts,
                Collector<Tuple3<String, Long, Long>> out) {
            out.collect(Tuple3.of(word, context.window().getEnd(), counts.iterator().next()));
        }
    }

    /** Keeps the best K (word, count) of a window and emits them once the window is complete. */
    static final class TopKPerWindow
            extends KeyedProcessFunction<Long, Tuple3<String, Long, Long>, Tuple2<Long, long[]>> {

        private static final long serialVersionUID = 1L;

        private final int k;
        private transient ValueState<long[]> top;

        TopKPerWindow(int k) {
            this.k = k;
        }

        @Override
        public void open(OpenContext openContext) {
            top =
                    getRuntimeContext()
                            .getState(
                                    new ValueStateDescriptor<>(
                                            "top", PrimitiveArrayTypeInfo.LONG_PRIMITIVE_ARRAY_TYPE_INFO));
        }

        @Override
        public void processElement(
                Tuple3<String, Long, Long> count, Context ctx, Collector<Tuple2<Long, long[]>> out)
                throws Exception {
            long[] current = top.value();
            if (current == null) {
                current = TopKEntries.EMPTY;
                // the counts of this window arrive before the watermark that closed it
                ctx.timerService().registerEventTimeTimer(count.f1 - 1);
            }
            top.update(TopKEntries.insert(current, k, Words.idOf(count.f0), count.f2));
        }

        @Override
        public void onTimer(long timestamp, OnTimerContext ctx, Collector<Tuple2<Long, long[]>> out)
                throws Exception {
            out.collect(Tuple2.of(ctx.getCurrentKey(), top.value()));
            top.clear();
        }
    }

    /** Holds the top-K lists emitted since the last barrier, then commits them. */
    static final class TopKSink extends CommittingSink<Tuple2<Long, long[]>> {

        private static final long serialVersionUID = 1L;

        private transient Map<Long, long[]> held;

        TopKSink(String runId) {
            super(runId);
        }

        @Override
        protected void hold(Tuple2<Long, long[]> value) {
            if (held == null) {
                held = new HashMap<>();
            }
            held.put(value.f0, value.f1);
        }

        @Override
        protected Runnable takeHeld(RunChannel channel) {
            Map<Long, long[]> output = held == null ? new HashMap<>() : held;
            held = null;
            return () -> output.forEach(channel::topK);
        }
    }
}
