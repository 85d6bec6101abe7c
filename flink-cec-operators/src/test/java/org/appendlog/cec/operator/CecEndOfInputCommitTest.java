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
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.source.CecLogSource;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A bounded job's committed stream holds all its results, whichever way the job checkpoints. */
class CecEndOfInputCommitTest {

    private static final long EVENTS = 3_000;

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = CecMiniCluster.withFourSlots();

    @TempDir File tmp;

    @ParameterizedTest(name = "checkpointing {0}, checkpoints after tasks finish {1}")
    @CsvSource({"false, true", "true, true", "true, false"})
    void everyResultIsCommittedAtTheEndOfABoundedInput(boolean checkpointing, boolean afterTasksFinish)
            throws Exception {
        String path = new File(tmp, "stream").toURI().toString();
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.ENABLE_CHECKPOINTS_AFTER_TASKS_FINISH, afterTasksFinish);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(2);
        if (checkpointing) {
            env.enableCheckpointing(100);
        }
        // Paced so that checkpoints complete while the input runs and commit a prefix of the stream.
        DataStream<CecRecord<String, TimeWindow, Long, Long>> counts =
                WordCountJob.cecCounts(
                        WordCountJob.words(env, EVENTS, 5, 5, 3_000),
                        WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1)),
                        CecOptions.builder(path).build());
        TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type = counts.getType();
        counts.addSink(new DiscardingSink<>());
        env.execute("bounded cec word count");

        // Every event lies in two sliding windows, and all windows fire at the end of input.
        List<Long> committedCounts = new ArrayList<>();
        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setParallelism(2);
        reader.fromSource(CecLogSource.of(path, type, Long.MIN_VALUE), WatermarkStrategy.noWatermarks(), "history")
                .filter(CecRecord::isResult)
                .map((MapFunction<CecRecord<String, TimeWindow, Long, Long>, Long>) CecRecord::getValue)
                .returns(Long.class)
                .executeAndCollect()
                .forEachRemaining(committedCounts::add);
        assertThat(committedCounts.stream().mapToLong(Long::longValue).sum()).isEqualTo(EVENTS * 2);
    }
}
