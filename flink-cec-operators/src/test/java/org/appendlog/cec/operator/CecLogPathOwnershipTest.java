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
import org.appendlog.cec.CommittedResults;
import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.cec.log.PersistedStream;

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.time.Duration;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Each CEC operator needs its own log path; a second operator on a path in use is refused. */
class CecLogPathOwnershipTest {

    private static final long EVENTS = 6_000;

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = CecMiniCluster.withFourSlots();

    @TempDir File tmp;

    @Test
    void twoOperatorsOfOneJobOnOnePathFailNamingBoth() {
        File dir = new File(tmp, "shared");
        StreamExecutionEnvironment env = CecMiniCluster.environment(2, new Configuration());
        DataStream<Tuple2<String, Long>> words = WordCountJob.words(env, 2_000, 5, 5, 0);
        cec(words, dir, "cec-a").addSink(new DiscardingSink<>());
        cec(words, dir, "cec-b").addSink(new DiscardingSink<>());

        assertThatThrownBy(() -> env.execute("two operators, one path"))
                .hasStackTraceContaining(dir.getPath())
                .hasStackTraceContaining("operator 'cec-a'")
                .hasStackTraceContaining("operator 'cec-b'")
                .hasStackTraceContaining("cec.log.path");
    }

    @Test
    void anotherOperatorOnAPathInUseDoesNotBlockTheOwnersRestore() throws Exception {
        File dir = new File(tmp, "owned");
        File savepoints = new File(tmp, "savepoints");

        // The owner runs until its first commit and stops with a savepoint.
        StreamExecutionEnvironment first = CecMiniCluster.environment(2, new Configuration());
        cec(WordCountJob.words(first, EVENTS, 5, 5, 1_000), dir, "cec-a").addSink(new DiscardingSink<>());
        JobClient owner = first.executeAsync("owner");
        CommittedResults.awaitFirstCommit(dir);
        String savepoint =
                owner.stopWithSavepoint(false, savepoints.toURI().toString(), SavepointFormatType.CANONICAL).get();

        // Of higher parallelism than the owner: its extra subtasks must not create directories.
        StreamExecutionEnvironment intruder = CecMiniCluster.environment(4, new Configuration());
        cec(WordCountJob.words(intruder, EVENTS, 5, 5, 0), dir, "cec-b").addSink(new DiscardingSink<>());
        assertThatThrownBy(() -> intruder.execute("intruder"))
                .hasStackTraceContaining("operator 'cec-a'")
                .hasStackTraceContaining("operator 'cec-b'");
        assertThat(dir.list()).containsExactlyInAnyOrder("subtask-0000", "subtask-0001");

        // A refused operator that died before removing its marker must not block the owner.
        for (int i = 0; i < 2; i++) {
            File stale = new File(new File(PersistedStream.subtaskDirectory(new Path(dir.toURI()), i).toUri()),
                    "owner-00000000000000000000000000000bad");
            try (DataOutputStream out = new DataOutputStream(new FileOutputStream(stale))) {
                out.writeUTF("died while refused");
            }
        }

        Configuration restore = new Configuration();
        restore.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        StreamExecutionEnvironment resumed = CecMiniCluster.environment(2, restore);
        cec(WordCountJob.words(resumed, EVENTS, 5, 5, 0), dir, "cec-a").addSink(new DiscardingSink<>());
        resumed.execute("owner, restored");

        // Every event lies in two sliding windows; each window's RESULT is in the stream once.
        List<String> results = results(dir);
        assertThat(results).doesNotHaveDuplicates();
        long total = results.stream().mapToLong(r -> Long.parseLong(r.substring(r.lastIndexOf('|') + 1))).sum();
        assertThat(total).isEqualTo(EVENTS * 2);
    }

    private static SingleOutputStreamOperator<CecRecord<String, TimeWindow, Long, Long>> cec(
            DataStream<Tuple2<String, Long>> words, File dir, String name) {
        return CecWindows.of(words.keyBy(w -> w.f0))
                .window(WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .aggregate(new WordCountJob.Count(), CecOptions.builder(dir.toURI().toString()).build())
                .uid(name)
                .name(name);
    }

    /** The RESULT tuples of the committed stream as "key|window start|count". */
    private static List<String> results(File dir) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        StreamExecutionEnvironment types = StreamExecutionEnvironment.getExecutionEnvironment();
        return CommittedResults.readDescribed(dir, cec(WordCountJob.words(types, 1, 5, 5, 0), dir, "any").getType(), env);
    }
}
