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

package org.appendlog.hbase;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;
import org.apache.flink.util.Collector;

import org.appendlog.testing.SlowDown;

import javax.annotation.Nullable;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * A keyed counting job whose result is exact only if every restore brings back the right state:
 * numbers {@code 0..n-1} are counted per key {@code n % KEYS}; the sink keeps the highest count
 * seen per key, so lost state shows as a too-low and replayed-but-not-restored state as a
 * too-high final count. The static fields work because the MiniCluster runs in the test JVM.
 *
 * <p>Per attempt (0 before the first failure), it also counts the records that passed the
 * failing map, right after the source, and those the counting tasks counted: after a restore, the
 * counting tasks count what the restored sources emit anew plus what the restored checkpoint held
 * in flight between them (channel state of unaligned checkpoints).
 */
final class CountingJob {

    static final int KEYS = 20;

    static final Map<Long, Long> MAX_COUNT_PER_KEY = new ConcurrentHashMap<>();
    static final AtomicLong RECORDS_COUNTED = new AtomicLong();
    static final AtomicInteger FAILURES_THROWN = new AtomicInteger();
    static final Map<Integer, AtomicLong> PASSED_PER_ATTEMPT = new ConcurrentHashMap<>();
    static final Map<Integer, AtomicLong> COUNTED_PER_ATTEMPT = new ConcurrentHashMap<>();

    private CountingJob() {}

    static void reset() {
        MAX_COUNT_PER_KEY.clear();
        RECORDS_COUNTED.set(0);
        FAILURES_THROWN.set(0);
        PASSED_PER_ATTEMPT.clear();
        COUNTED_PER_ATTEMPT.clear();
    }

    /** Records that passed the failing map (right after the source) in {@code attempt}. */
    static long passed(int attempt) {
        AtomicLong passed = PASSED_PER_ATTEMPT.get(attempt);
        return passed == null ? 0 : passed.get();
    }

    /** Records the counting tasks counted in {@code attempt}. */
    static long counted(int attempt) {
        AtomicLong counted = COUNTED_PER_ATTEMPT.get(attempt);
        return counted == null ? 0 : counted.get();
    }

    private static void increment(Map<Integer, AtomicLong> perAttempt, int attempt) {
        perAttempt.computeIfAbsent(attempt, a -> new AtomicLong()).incrementAndGet();
    }

    /**
     * @param failAfterRecordsPerSubtask if positive, each subtask of the first attempt throws once
     *     after that many records and two completed checkpoints
     */
    static void build(
            StreamExecutionEnvironment env, long records, double recordsPerSecond, long failAfterRecordsPerSubtask) {
        build(env, records, recordsPerSecond, failAfterRecordsPerSubtask, null);
    }

    /**
     * @param slowDown if not null, chained to the counting operator, before the sink: the counting
     *     tasks fall behind the source, so records wait in the network exchange between them
     *     (backpressure), which unaligned checkpoints persist as channel state
     */
    static void build(
            StreamExecutionEnvironment env,
            long records,
            double recordsPerSecond,
            long failAfterRecordsPerSubtask,
            @Nullable SlowDown<Tuple2<Long, Long>> slowDown) {
        DataStream<Tuple2<Long, Long>> counts =
                env.fromSource(
                        new DataGeneratorSource<>(
                                i -> i, records, RateLimiterStrategy.perSecond(recordsPerSecond), Types.LONG),
                        WatermarkStrategy.noWatermarks(),
                        "numbers")
                .uid("numbers")
                .map(new FailOnce(failAfterRecordsPerSubtask))
                .uid("fail-once")
                .keyBy(n -> n % KEYS)
                .process(new CountPerKey())
                .uid("count");
        if (slowDown != null) {
            counts = counts.map(slowDown).uid("slow-down").name("slow-down");
        }
        counts.addSink(new MaxCountSink()).uid("sink");
    }

    /** Every key gets {@code records / KEYS} numbers. */
    static Map<Long, Long> expectedCounts(long records) {
        Map<Long, Long> expected = new ConcurrentHashMap<>();
        for (long key = 0; key < KEYS; key++) {
            expected.put(key, records / KEYS);
        }
        return expected;
    }

    private static final class FailOnce extends RichMapFunction<Long, Long> implements CheckpointListener {
        private final long failAfterRecords;
        private long seen;
        private int completedCheckpoints;

        FailOnce(long failAfterRecords) {
            this.failAfterRecords = failAfterRecords;
        }

        @Override
        public Long map(Long value) {
            seen++;
            if (failAfterRecords > 0
                    && getRuntimeContext().getTaskInfo().getAttemptNumber() == 0
                    && completedCheckpoints >= 2
                    && seen >= failAfterRecords) {
                FAILURES_THROWN.incrementAndGet();
                throw new IllegalStateException("Failure injected mid-stream after " + seen + " records");
            }
            increment(PASSED_PER_ATTEMPT, getRuntimeContext().getTaskInfo().getAttemptNumber());
            return value;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            completedCheckpoints++;
        }
    }

    private static final class CountPerKey extends KeyedProcessFunction<Long, Long, Tuple2<Long, Long>> {
        private transient ValueState<Long> count;

        @Override
        public void open(OpenContext openContext) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        }

        @Override
        public void processElement(Long value, Context ctx, Collector<Tuple2<Long, Long>> out)
                throws Exception {
            long next = (count.value() == null ? 0 : count.value()) + 1;
            count.update(next);
            RECORDS_COUNTED.incrementAndGet();
            increment(COUNTED_PER_ATTEMPT, getRuntimeContext().getTaskInfo().getAttemptNumber());
            out.collect(Tuple2.of(ctx.getCurrentKey(), next));
        }
    }

    private static final class MaxCountSink implements SinkFunction<Tuple2<Long, Long>> {
        @Override
        public void invoke(Tuple2<Long, Long> keyAndCount, Context context) {
            MAX_COUNT_PER_KEY.merge(keyAndCount.f0, keyAndCount.f1, Math::max);
        }
    }
}
