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

package org.appendlog.cec;

import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecWindows;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.connector.datagen.source.GeneratorFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import java.time.Duration;

/**
 * The windowed word count used by the failure tests and the benchmark: a replayable generator of
 * (word, event time) pairs, sliding event-time windows, counts per word and window.
 */
public final class WordCountJob {

    private WordCountJob() {}

    /** The i-th word event: one of {@code words} words, event time {@code i * millisPerEvent}. */
    public static Tuple2<String, Long> event(long i, int words, long millisPerEvent) {
        long h = i * 0x9E3779B97F4A7C15L;
        return Tuple2.of("w" + Math.floorMod(h >>> 17, words), i * millisPerEvent);
    }

    /**
     * The i-th word event with log-uniformly skewed words: word k has frequency about 1/k, so a
     * few words are hot and most are rare (their windows change seldom).
     */
    public static Tuple2<String, Long> skewedEvent(long i, int words, long millisPerEvent) {
        double u = ((i * 0x9E3779B97F4A7C15L) >>> 11) * 0x1.0p-53;
        return Tuple2.of("w" + ((long) Math.pow(words, u) - 1), i * millisPerEvent);
    }

    /** Word events from a replayable generator with ascending timestamps; {@code perSecond <= 0}: no limit. */
    public static DataStream<Tuple2<String, Long>> words(
            StreamExecutionEnvironment env, long count, int words, long millisPerEvent, double perSecond) {
        return words(env, count, words, millisPerEvent, perSecond, false);
    }

    /** As above; {@code skewed} draws words with {@link #skewedEvent}. */
    public static DataStream<Tuple2<String, Long>> words(
            StreamExecutionEnvironment env, long count, int words, long millisPerEvent, double perSecond,
            boolean skewed) {
        return words(env, count, words, millisPerEvent, pace(perSecond), skewed);
    }

    /** Word events paced by {@code pace} (e.g. per completed checkpoint, whatever the machine's load). */
    public static DataStream<Tuple2<String, Long>> words(
            StreamExecutionEnvironment env, long count, int words, long millisPerEvent, RateLimiterStrategy pace,
            boolean skewed) {
        return generated(
                env, count, i -> skewed ? skewedEvent(i, words, millisPerEvent) : event(i, words, millisPerEvent),
                pace);
    }

    /** The events {@code generator} makes of 0 to {@code count - 1}, their timestamps ascending in {@code f1}. */
    public static DataStream<Tuple2<String, Long>> generated(
            StreamExecutionEnvironment env, long count, GeneratorFunction<Long, Tuple2<String, Long>> generator,
            double perSecond) {
        return generated(env, count, generator, pace(perSecond));
    }

    private static DataStream<Tuple2<String, Long>> generated(
            StreamExecutionEnvironment env, long count, GeneratorFunction<Long, Tuple2<String, Long>> generator,
            RateLimiterStrategy pace) {
        DataGeneratorSource<Tuple2<String, Long>> source =
                new DataGeneratorSource<>(
                        generator,
                        count,
                        pace,
                        Types.TUPLE(Types.STRING, Types.LONG));
        return env.fromSource(
                        source,
                        WatermarkStrategy.<Tuple2<String, Long>>forMonotonousTimestamps()
                                .withTimestampAssigner((e, ts) -> e.f1),
                        "words")
                .setParallelism(1);
    }

    /** {@code perSecond <= 0}: no limit. */
    private static RateLimiterStrategy pace(double perSecond) {
        return perSecond > 0 ? RateLimiterStrategy.perSecond(perSecond) : RateLimiterStrategy.noOp();
    }

    public static WindowAssigner<Object, TimeWindow> windows(Duration size, Duration slide) {
        return SlidingEventTimeWindows.of(size, slide);
    }

    /** The CEC word count: all OPEN/CHECK/RESULT tuples, persisted under the options' log path. */
    public static DataStream<CecRecord<String, TimeWindow, Long, Long>> cecCounts(
            DataStream<Tuple2<String, Long>> words, WindowAssigner<Object, TimeWindow> windows, CecOptions options) {
        return CecWindows.of(words.keyBy(w -> w.f0)).window(windows).aggregate(new Count(), options).name("cec-wordcount");
    }

    /** Counts elements. */
    public static final class Count extends Counting<Long> {
        @Override
        public Long getResult(Long acc) {
            return acc;
        }
    }

    /** Counts elements into a {@code long}; a subclass says what a window's count becomes. */
    public abstract static class Counting<R> implements AggregateFunction<Tuple2<String, Long>, Long, R> {
        @Override
        public Long createAccumulator() {
            return 0L;
        }

        @Override
        public Long add(Tuple2<String, Long> value, Long acc) {
            return acc + 1;
        }

        @Override
        public Long merge(Long a, Long b) {
            return a + b;
        }
    }
}
