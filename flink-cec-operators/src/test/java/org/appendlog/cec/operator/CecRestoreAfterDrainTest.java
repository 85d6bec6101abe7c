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

import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Stop-with-savepoint {@code --drain} ends event time ({@code Long.MAX_VALUE} watermark, every
 * window fires), and the job is then restored from that savepoint with the rest of its input. The
 * CEC operator must go on windowing the new input as Flink's {@code WindowOperator} does; its
 * RESULTs' timestamps never go back, so some after the restore carry a later window's end.
 */
class CecRestoreAfterDrainTest {

    private static final long EVENTS = 6_000;

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = CecMiniCluster.withFourSlots();

    /** Results of Flink's window operator, over both runs (the mini cluster runs in this JVM). */
    static final Queue<String> FLINK_RESULTS = new ConcurrentLinkedQueue<>();

    @TempDir File tmp;

    @Test
    void afterADrainAndRestoreNewInputIsWindowedAsByFlinksWindowOperator() throws Exception {
        FLINK_RESULTS.clear();
        File dir = new File(tmp, "stream");

        // Paced, so that the drain comes in the middle of the input.
        StreamExecutionEnvironment first = CecMiniCluster.environment(2, new Configuration());
        job(first, dir, 1_000);
        JobClient drained = first.executeAsync("drained");
        Configuration restore = CecMiniCluster.stopAfterFirstCommit(drained, dir, new File(tmp, "savepoints"), true);
        int resultsBeforeRestore = FLINK_RESULTS.size();
        StreamExecutionEnvironment resumed = CecMiniCluster.environment(2, restore);
        TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type = job(resumed, dir, 0);
        resumed.execute("restored after drain");

        List<String> flink = new ArrayList<>(FLINK_RESULTS);
        // The drain fired the open windows early; their later input fires them again, so every event
        // is still counted in both of its sliding windows, and most windows come after the restore.
        assertThat(flink.stream().mapToLong(CecRestoreAfterDrainTest::countOf).sum()).isEqualTo(EVENTS * 2);
        assertThat(flink.size() - resultsBeforeRestore).isGreaterThan(resultsBeforeRestore);
        List<CecRecord<String, TimeWindow, Long, Long>> committed = committedResults(dir, type);
        assertThat(committed)
                .map(r -> CommittedResults.describe(r.getKey(), r.getWindow(), r.getValue()))
                .containsExactlyInAnyOrderElementsOf(flink);
        // The persisted stream's time never goes back: a RESULT is stamped with its window's end,
        // or later where the drain had already stamped a later window's end (as the README says).
        assertThat(committed)
                .allSatisfy(r -> assertThat(r.getTimestamp()).isGreaterThanOrEqualTo(r.getWindow().maxTimestamp()));
        assertThat(committed)
                .as("RESULTs stamped later than their windows' ends (only the restored run's can be)")
                .anySatisfy(r -> assertThat(r.getTimestamp()).isGreaterThan(r.getWindow().maxTimestamp()));
    }

    /** The CEC word count and Flink's window operator side by side; returns the CEC output type. */
    private static TypeInformation<CecRecord<String, TimeWindow, Long, Long>> job(
            StreamExecutionEnvironment env, File dir, double perSecond) {
        KeyedStream<Tuple2<String, Long>, String> words =
                WordCountJob.words(env, EVENTS, 5, 5, perSecond).keyBy(w -> w.f0);
        DataStream<CecRecord<String, TimeWindow, Long, Long>> cec =
                CecWindows.of(words)
                        .window(WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                        .aggregate(new WordCountJob.Count(), CecOptions.builder(dir.toURI().toString()).build())
                        .uid("cec");
        cec.addSink(new DiscardingSink<>());
        words.window(WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                .aggregate(new WordCountJob.Count(), new Describe())
                .uid("flink")
                .addSink(new FlinkResults());
        return cec.getType();
    }

    private static List<CecRecord<String, TimeWindow, Long, Long>> committedResults(
            File dir, TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        return CommittedResults.read(dir, type, env);
    }

    private static long countOf(String result) {
        return Long.parseLong(result.substring(result.lastIndexOf('|') + 1));
    }

    /** Flink's window result in the form of {@link CommittedResults#describe}. */
    private static final class Describe extends ProcessWindowFunction<Long, String, String, TimeWindow> {
        @Override
        public void process(String key, Context ctx, Iterable<Long> counts, Collector<String> out) {
            for (long count : counts) {
                out.collect(CommittedResults.describe(key, ctx.window(), count));
            }
        }
    }

    private static final class FlinkResults implements SinkFunction<String> {
        @Override
        public void invoke(String value, Context context) {
            FLINK_RESULTS.add(value);
        }
    }
}
