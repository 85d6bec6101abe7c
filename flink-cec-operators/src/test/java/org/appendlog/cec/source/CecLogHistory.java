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

import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecWindows;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/**
 * A CEC word count that persists its stream, then a second job that reads the stream back with {@link
 * CecLogSource}: what a user of the CEC jar runs. The end-to-end test CecLogSourceOnFlinkDistITCase runs it
 * on Flink's distribution classpath, the CEC jar and this module's test classes, nothing else. Record
 * {@code i} is word {@code i % words} at event time {@code i} ms, counted in tumbling one-second windows.
 * The second job's RESULT tuples are written to {@code --out}, one line per word with the sum of its window
 * counts, then a line {@code results <number of RESULT tuples>}.
 *
 * <p>Arguments: {@code --log <local directory> --out <local file> [--words 10] [--events 6000]}.
 */
public final class CecLogHistory {

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        String log = new File(params.getRequired("log")).toURI().toString();
        String out = params.getRequired("out");
        int words = params.getInt("words", 10);
        long events = params.getLong("events", 6000);

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        SingleOutputStreamOperator<CecRecord<String, TimeWindow, Long, Long>> counts =
                CecWindows.of(
                                env.fromSequence(0, events - 1)
                                        .map(i -> Tuple2.of("w" + (i % words), i))
                                        .returns(Types.TUPLE(Types.STRING, Types.LONG))
                                        .assignTimestampsAndWatermarks(
                                                WatermarkStrategy.<Tuple2<String, Long>>forMonotonousTimestamps()
                                                        .withTimestampAssigner((e, t) -> e.f1))
                                        .keyBy(e -> e.f0))
                        .window(TumblingEventTimeWindows.of(Duration.ofSeconds(1)))
                        .aggregate(new WordCountJob.Count(), CecOptions.builder(log).build());
        counts.addSink(new DiscardingSink<>());
        env.execute("cec-persist");

        StreamExecutionEnvironment history = StreamExecutionEnvironment.getExecutionEnvironment();
        history.setParallelism(2);
        Map<String, Long> sums = new TreeMap<>();
        long results = 0;
        try (var records =
                history.fromSource(
                                CecLogSource.of(log, counts.getType(), Long.MIN_VALUE),
                                WatermarkStrategy.noWatermarks(),
                                "cec-history")
                        .filter(CecRecord::isResult)
                        .executeAndCollect("cec-history")) {
            while (records.hasNext()) {
                CecRecord<String, TimeWindow, Long, Long> r = records.next();
                sums.merge(r.getKey(), r.getValue(), Long::sum);
                results++;
            }
        }
        List<String> lines = new ArrayList<>();
        sums.forEach((word, sum) -> lines.add(word + " " + sum));
        lines.add("results " + results);
        Files.write(Paths.get(out), lines, StandardCharsets.UTF_8);
    }
}
