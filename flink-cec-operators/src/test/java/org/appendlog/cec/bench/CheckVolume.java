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
 * elements: {@code 524 288 * size} events at {@code --fig44-rate} events per second, so that a
 * window stays open for {@code (size - 1) * words} events on average, 5 ms by default, whatever
 * the machine's speed: windows of a few milliseconds, as the paper's count at T = H = 2 ms (1.4
 * CHECKs per window) implies. For count windows the policy's clock is processing time.
 *
 * <p>Arguments: {@code --fig44-words 1024}, {@code --fig44-size 2}, {@code --fig44-rate 200000},
 * {@code --fig44-t-ms 2,20,100}, {@code --checkpoint-ms 1000}.
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
        double rate = args.doubleValue("fig44-rate", 200_000);
        MarkdownTable table = new MarkdownTable(
                String.format(
                        "Fig. 4.4 in shape: %,d count windows of %d elements over %d words (%,d events at %,.0f per"
                                + " second: windows open for %.1f ms on average), eventual mode, M = 1000, parallelism %d",
                        WINDOWS, size, words, events, rate, (size - 1) * words / rate * 1000, cluster.parallelism()),
                "T = H ms", "CHECKs", "paper's CHECKs", "CHECKs / window", "RESULTs", "goodput ev/s");
        for (String t : args.string("fig44-t-ms", "2,20,100").split(",")) {
            long millis = Long.parseLong(t);
            StreamExecutionEnvironment env = cluster.env("hashmap", args.longValue("checkpoint-ms", 1000));
            CecOptions options = CecOptions.builder(cluster.logPath())
                    .period(Duration.ofMillis(millis))
                    .slowThreshold(Duration.ofMillis(millis))
                    .build();
            CecWindows.of(BenchCluster.keyed(WordCountJob.words(env, events, words, 1, rate), -1))
                    .countWindow(size)
                    .aggregate(new WordCountJob.Count(), options)
                    .name(BenchCluster.WINDOW)
                    .addSink(new DiscardingSink<>());
            BenchRun run = cluster.execute(env, events);
            long checks = run.counter(CecMetrics.CHECK_TUPLES);
            table.row(
                    millis, MarkdownTable.count(checks), paper(millis), MarkdownTable.ratio(checks / (double) WINDOWS),
                    MarkdownTable.count(run.counter(CecMetrics.RESULT_TUPLES)), MarkdownTable.count(run.eventsPerSecond()));
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
