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

import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.cec.operator.CecMetrics;

import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;

import java.time.Duration;

/**
 * The paper's Fig. 4.4 in shape: CHECK tuples of the eventual policy against T = H, for 524 288
 * count windows. {@code --fig44-words} words (uniform) with windows of {@code --fig44-size}
 * elements: {@code 524 288 * size} events, each window open for about {@code words * size}
 * events: a few milliseconds at this operator's rate, as the paper's count at T = H = 2 ms (1.4
 * CHECKs per window) implies; with much shorter windows no H of the sweep makes many of them
 * slow. For count windows the policy's clock is processing time.
 *
 * <p>Arguments: {@code --fig44-words 1024}, {@code --fig44-size 2}, {@code --fig44-t-ms 2,20,100},
 * {@code --checkpoint-ms 1000}.
 */
final class CheckVolume {

    static final long WINDOWS = 524_288;
    /** The paper's CHECK tuples at T = H = 2, 20 and 100 ms. */
    private static final long[][] PAPER = {{2, 718_874}, {20, 35_000}, {100, 76}};

    private final BenchArgs args;
    private final BenchCluster cluster;

    CheckVolume(BenchArgs args, BenchCluster cluster) {
        this.args = args;
        this.cluster = cluster;
    }

    void run() throws Exception {
        int words = args.intValue("fig44-words", 1024);
        long size = args.longValue("fig44-size", 2);
        long events = WINDOWS * size;
        MarkdownTable table = new MarkdownTable(
                String.format(
                        "Fig. 4.4 in shape: %,d count windows of %d elements over %d words (%,d events), eventual mode,"
                                + " M = 1000, parallelism %d",
                        WINDOWS, size, words, events, cluster.parallelism()),
                "T = H ms", "CHECKs", "paper's CHECKs", "CHECKs / window", "RESULTs", "goodput ev/s",
                "window open, ms (mean)");
        for (String t : args.string("fig44-t-ms", "2,20,100").split(",")) {
            long millis = Long.parseLong(t);
            StreamExecutionEnvironment env = cluster.env("hashmap", args.longValue("checkpoint-ms", 1000));
            CecOptions options = CecOptions.builder(cluster.logPath())
                    .period(Duration.ofMillis(millis))
                    .slowThreshold(Duration.ofMillis(millis))
                    .build();
            CecWindows.of(BenchCluster.keyed(WordCountJob.words(env, events, words, 1, 0), -1))
                    .countWindow(size)
                    .aggregate(new WordCountJob.Count(), options)
                    .name(BenchCluster.WINDOW)
                    .addSink(new DiscardingSink<>());
            BenchRun run = cluster.execute(env, events);
            long checks = run.counter(CecMetrics.CHECK_TUPLES);
            table.row(
                    millis, MarkdownTable.count(checks), paper(millis), MarkdownTable.ratio(checks / (double) WINDOWS),
                    MarkdownTable.count(run.counter(CecMetrics.RESULT_TUPLES)), MarkdownTable.count(run.eventsPerSecond()),
                    // a window lives while all the words take `size` turns each
                    MarkdownTable.ratio(words * size / run.eventsPerSecond() * 1000));
        }
        table.print();
    }

    private static String paper(long millis) {
        for (long[] point : PAPER) {
            if (point[0] == millis) {
                return MarkdownTable.count(point[1]);
            }
        }
        return "-";
    }
}
