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
import org.appendlog.cec.api.CecMode;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.cec.operator.CecMetrics;

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;

import java.time.Duration;

/**
 * The paper's Fig. 4.3 in shape: what persisting OPEN tuples costs in three count-window
 * regimes. Fast: 1 000 words, windows of 2 elements, each open for about 2 000 events; half the
 * events open a window. Slow: 100 000 words and windows of 1 000 elements, larger than any
 * word's share of the input, so every window stays open to the end. Mixed: skewed words (word k
 * has frequency about 1/k) and windows of 10, so hot words' windows close quickly and rare
 * words' stay open. The operator cannot leave OPENs out (an OPEN is the footprint a
 * restore starts a window from), so the run without persisted OPENs is Flink's {@code
 * WindowOperator} on {@code hashmap}, which persists nothing per element; {@code open-only} mode
 * persists OPEN, INPUT and RESULT records, {@code eventual} adds the policy's CHECKs.
 *
 * <p>The eventual policy runs with T = H = 1 s ({@code --figure-policy-ms}; processing time, the
 * clock of count windows), so that the slow regime's windows get CHECKs within the run.
 *
 * <p>Arguments: {@code --figure-events 5000000}, {@code --figure-policy-ms 1000}, {@code
 * --checkpoint-ms 1000}.
 */
final class OpenOverhead {

    /** A count-window workload: its name, distinct words, skew and window size. */
    private static final class Regime {
        final String name;
        final int words;
        final boolean skewed;
        final long size;

        Regime(String name, int words, boolean skewed, long size) {
            this.name = name;
            this.words = words;
            this.skewed = skewed;
            this.size = size;
        }
    }

    private static final Regime[] REGIMES = {
        new Regime("fast", 1_000, false, 2), new Regime("slow", 100_000, false, 1_000), new Regime("mixed", 100_000, true, 10)
    };

    private final BenchArgs args;
    private final BenchCluster cluster;
    private final long events;
    private final long checkpointMillis;

    OpenOverhead(BenchArgs args, BenchCluster cluster) {
        this.args = args;
        this.cluster = cluster;
        this.events = args.longValue("figure-events", 5_000_000);
        this.checkpointMillis = args.longValue("checkpoint-ms", 1000);
    }

    void run() throws Exception {
        if (args.flag("warm-up", true)) {
            runCec(REGIMES[0], CecMode.EVENTUAL);
            runWindowOperator(REGIMES[0]);
        }
        MarkdownTable table = new MarkdownTable(
                String.format(
                        "Fig. 4.3 in shape: count windows, %,d events, parallelism %d, Flink checkpoint every %d ms, no"
                                + " failure; eventual T = H = %d ms",
                        events, cluster.parallelism(), checkpointMillis, args.longValue("figure-policy-ms", 1000)),
                "regime", "words", "window size", "operator", "goodput ev/s", "against no log", "OPENs / event",
                "CHECKs / event", "log bytes / event");
        for (Regime regime : REGIMES) {
            BenchRun none = runWindowOperator(regime);
            row(table, regime, "WindowOperator/hashmap (nothing persisted)", none, none);
            for (CecMode mode : new CecMode[] {CecMode.OPEN_ONLY, CecMode.EVENTUAL}) {
                row(table, regime, "CEC " + mode, runCec(regime, mode), none);
            }
        }
        table.print();
    }

    private void row(MarkdownTable table, Regime regime, String operator, BenchRun run, BenchRun none) {
        table.row(
                regime.name, MarkdownTable.count(regime.words) + (regime.skewed ? " skewed" : " uniform"), regime.size,
                operator, MarkdownTable.count(run.eventsPerSecond()),
                MarkdownTable.ratio(run.eventsPerSecond() / none.eventsPerSecond()),
                MarkdownTable.ratio(run.counter(CecMetrics.OPEN_TUPLES) / (double) events),
                MarkdownTable.ratio(run.counter(CecMetrics.CHECK_TUPLES) / (double) events),
                MarkdownTable.ratio(run.logBytes / (double) events));
    }

    private KeyedStream<Tuple2<String, Long>, String> input(StreamExecutionEnvironment env, Regime regime) {
        return BenchCluster.keyed(WordCountJob.words(env, events, regime.words, 1, 0, regime.skewed), -1);
    }

    private BenchRun runCec(Regime regime, CecMode mode) throws Exception {
        StreamExecutionEnvironment env = cluster.env("hashmap", checkpointMillis);
        Duration policy = Duration.ofMillis(args.longValue("figure-policy-ms", 1000));
        CecOptions options =
                CecOptions.builder(cluster.logPath()).mode(mode).period(policy).slowThreshold(policy).build();
        CecWindows.of(input(env, regime))
                .countWindow(regime.size)
                .aggregate(new WordCountJob.Count(), options)
                .name(BenchCluster.WINDOW)
                .addSink(new DiscardingSink<>());
        return cluster.execute(env, events);
    }

    private BenchRun runWindowOperator(Regime regime) throws Exception {
        StreamExecutionEnvironment env = cluster.env("hashmap", checkpointMillis);
        input(env, regime).countWindow(regime.size).aggregate(new WordCountJob.Count()).name(BenchCluster.WINDOW)
                .addSink(new DiscardingSink<>());
        return cluster.execute(env, events);
    }
}
