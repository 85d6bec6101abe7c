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
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A job must be restored with the parallelism it was checkpointed with; a restore at another one
 * is refused and leaves the log path exactly as it was, so the right restore still works.
 */
class CecRestoreParallelismTest {

    private static final long EVENTS = 6_000;
    private static final int WORDS = 5;
    private static final long MILLIS_PER_EVENT = 5;
    private static final WindowAssigner<Object, TimeWindow> WINDOWS =
            WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1));

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = CecMiniCluster.withFourSlots();

    @TempDir File tmp;

    @Test
    void aRestoreAtAnotherParallelismIsRefusedAndLeavesThePathAsItWas() throws Exception {
        File dir = new File(tmp, "stream");

        // Paced, so that the savepoint comes in the middle of the input.
        StreamExecutionEnvironment first = CecMiniCluster.environment(2, new Configuration());
        job(first, dir, 1_000);
        JobClient running = first.executeAsync("parallelism 2");
        Configuration restore = CecMiniCluster.stopAfterFirstCommit(running, dir, new File(tmp, "savepoints"), false);
        Map<String, Long> before = listing(dir);
        for (int wrong : new int[] {4, 1}) {
            StreamExecutionEnvironment refused = CecMiniCluster.environment(wrong, restore);
            job(refused, dir, 0);
            assertThatThrownBy(() -> refused.execute("parallelism " + wrong))
                    .hasStackTraceContaining("operator 'cec'")
                    .hasStackTraceContaining("checkpointed with parallelism 2")
                    .hasStackTraceContaining("cannot be restored with parallelism " + wrong)
                    .hasStackTraceContaining("Restore it with parallelism 2")
                    .hasStackTraceContaining(dir.getPath());
            assertThat(listing(dir)).as("the log path after the refused restore at parallelism %d", wrong)
                    .isEqualTo(before);
        }

        StreamExecutionEnvironment resumed = CecMiniCluster.environment(2, restore);
        TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type = job(resumed, dir, 0);
        resumed.execute("parallelism 2, restored");

        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setParallelism(2);
        List<String> results = CommittedResults.readDescribed(dir, type, reader);
        assertThat(results).containsExactlyInAnyOrderElementsOf(expectedResults());
    }

    private static TypeInformation<CecRecord<String, TimeWindow, Long, Long>> job(
            StreamExecutionEnvironment env, File dir, double perSecond) {
        SingleOutputStreamOperator<CecRecord<String, TimeWindow, Long, Long>> cec =
                CecWindows.of(WordCountJob.words(env, EVENTS, WORDS, MILLIS_PER_EVENT, perSecond).keyBy(w -> w.f0))
                        .window(WINDOWS)
                        .aggregate(new WordCountJob.Count(), CecOptions.builder(dir.toURI().toString()).build())
                        .uid("cec")
                        .name("cec");
        cec.addSink(new DiscardingSink<>());
        return cec.getType();
    }

    /** Every (word, window) of the input with its count: what a failure-free run fires. */
    private static List<String> expectedResults() {
        Map<String, Long> counts = new TreeMap<>();
        for (long i = 0; i < EVENTS; i++) {
            Tuple2<String, Long> event = WordCountJob.event(i, WORDS, MILLIS_PER_EVENT);
            for (TimeWindow window : WINDOWS.assignWindows(event, event.f1, null)) {
                counts.merge(event.f0 + "|" + window.getStart(), 1L, Long::sum);
            }
        }
        return counts.entrySet().stream().map(e -> e.getKey() + "|" + e.getValue()).collect(Collectors.toList());
    }

    /** Every file and directory under {@code dir} with its size (directories: -1). */
    private static Map<String, Long> listing(File dir) throws IOException {
        java.nio.file.Path root = dir.toPath();
        try (Stream<java.nio.file.Path> files = Files.walk(root)) {
            Map<String, Long> listing = new TreeMap<>();
            for (java.nio.file.Path file : (Iterable<java.nio.file.Path>) files::iterator) {
                BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
                listing.put(root.relativize(file).toString(), attributes.isDirectory() ? -1L : attributes.size());
            }
            return listing;
        }
    }
}
