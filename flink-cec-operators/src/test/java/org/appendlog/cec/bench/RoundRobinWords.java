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

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * Word events that take the words in turn: event i is word {@code i mod words} at event time i
 * ms, so after the first {@code words} events every word has a window open.
 */
final class RoundRobinWords {

    private RoundRobinWords() {}

    static DataStream<Tuple2<String, Long>> of(StreamExecutionEnvironment env, long events, int words) {
        DataGeneratorSource<Tuple2<String, Long>> source =
                new DataGeneratorSource<>(
                        i -> Tuple2.of("w" + (i % words), i), events, RateLimiterStrategy.noOp(),
                        Types.TUPLE(Types.STRING, Types.LONG));
        return env.fromSource(
                        source,
                        WatermarkStrategy.<Tuple2<String, Long>>forMonotonousTimestamps()
                                .withTimestampAssigner((e, ts) -> e.f1),
                        "words")
                .setParallelism(1);
    }
}
