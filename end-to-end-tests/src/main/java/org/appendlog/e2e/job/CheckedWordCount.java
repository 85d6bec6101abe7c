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

package org.appendlog.e2e.job;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.utils.ParameterTool;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/**
 * A streaming word count whose result can be checked exactly, for the end-to-end test on a deployed
 * cluster. The input is replayable and deterministic: record {@code i} is word {@code i % words}, {@code
 * words * repetitions} records in all, so every word must be counted exactly {@code repetitions} times.
 * The counts live in keyed state (of whatever state backend the cluster configures); the job reports
 * when a word reaches its final count, and any count beyond it, as lines in files under {@code --out}.
 *
 * <p>Arguments: {@code --out <local directory> [--words 20] [--repetitions 300] [--rate 40]} (records per
 * second over all subtasks). The rate is not part of the state: a job restored from a checkpoint may run
 * with another rate and continues where the checkpoint left off.
 */
public final class CheckedWordCount {

    public static void main(String[] args) throws Exception {
        ParameterTool params = ParameterTool.fromArgs(args);
        String out = params.getRequired("out");
        int words = params.getInt("words", 20);
        long repetitions = params.getLong("repetitions", 300);
        double rate = params.getDouble("rate", 40);

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        DataGeneratorSource<String> input =
                new DataGeneratorSource<>(
                        i -> wordAt(i, words),
                        words * repetitions,
                        RateLimiterStrategy.perSecond(rate),
                        Types.STRING);

        env.fromSource(input, WatermarkStrategy.noWatermarks(), "words")
                .uid("words")
                .keyBy(word -> word)
                .process(new CountToTarget(repetitions))
                .uid("count")
                .name("count")
                .addSink(new AppendLinesSink(out))
                .uid("report")
                .name("report");
        env.execute("checked word count");
    }

    /** The word of record {@code i}. */
    public static String wordAt(long i, int words) {
        return String.format("w%03d", i % words);
    }
}
