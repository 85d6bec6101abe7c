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
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;

import java.time.Duration;

/**
 * The task thread's time at each barrier against the number of open windows, per mode and for
 * Flink's {@code WindowOperator} on {@code hashmap}. Every word has one tumbling event-time
 * window that stays open to the end of the input (a year long); the words come in turn, so all
 * {@code windows} are open after the first {@code windows} events, and the run goes on for
 * {@code --events-per-window} times as many events (at least {@code --min-events}). Each run
 * fails once after {@code --fail-at} of its input, so one run gives both the barrier figures and
 * the restore.
 *
 * <p>The eventual policy's T and H are in event time (1 ms per event): T = half the input, H a
 * quarter, so that each window gets a CHECK about twice per run whatever the number of windows.
 *
 * <p>Arguments: {@code --open-windows 1000,100000,1000000}, {@code --events-per-window 3},
 * {@code --min-events 1000000}, {@code --modes eventual,open-only,barrier}, {@code --baseline
 * hashmap} ({@code ,} for none), {@code --fail-at 0.7}, {@code --checkpoint-ms 1000}.
 */
final class BarrierCost {

    private final BenchArgs args;
    private final BenchCluster cluster;

    BarrierCost(BenchArgs args, BenchCluster cluster) {
        this.args = args;
        this.cluster = cluster;
    }

    void run() throws Exception {
        long checkpointMillis = args.longValue("checkpoint-ms", 1000);
        double failAt = args.doubleValue("fail-at", 0.7);
        if (args.flag("warm-up", true)) {
            run(CecMode.EVENTUAL, 1000, 500_000, -1, checkpointMillis);
        }
        MarkdownTable table = new MarkdownTable(
                String.format(
                        "Barrier cost: one window per word open to the end, parallelism %d, Flink checkpoint every %d ms,"
                                + " one failure after %s of the input; T = events/2, H = events/4 ms of event time",
                        cluster.parallelism(), checkpointMillis, failAt),
                "operator", "open windows", "events", "barriers timed", "barrier p50 µs", "barrier p99 µs", "barrier max µs",
                "ckpt p50 ms", "ckpt p99 ms", "ckpt max ms", "CHECKs / event", "log bytes / event",
                "goodput ev/s", "records scanned", "INPUTs replayed", "rebuild ms", "failure to caught-up ms");
        String baseline = args.string("baseline", "hashmap");
        for (String n : args.string("open-windows", "1000,100000,1000000").split(",")) {
            int windows = Integer.parseInt(n);
            long events = Math.max(args.longValue("events-per-window", 3) * windows, args.longValue("min-events", 1_000_000));
            long failAtEvent = (long) (events * failAt);
            for (String mode : args.string("modes", "eventual,open-only,barrier").split(",")) {
                BenchRun run = run(CecBenchmark.mode(mode), windows, events, failAtEvent, checkpointMillis);
                long[] barrier = run.histogramValues(CecMetrics.BARRIER_MICROS);
                table.row(
                        "CEC " + mode, MarkdownTable.count(windows), MarkdownTable.count(events), barrier.length,
                        BenchRun.quantile(barrier, 0.5), BenchRun.quantile(barrier, 0.99), BenchRun.quantile(barrier, 1.0),
                        checkpointMillis(run, 0.5), checkpointMillis(run, 0.99), checkpointMillis(run, 1.0),
                        MarkdownTable.ratio(run.counter(CecMetrics.CHECK_TUPLES) / (double) events),
                        MarkdownTable.ratio(run.logBytes / (double) events),
                        MarkdownTable.count(run.eventsPerSecond()),
                        run.gaugeSum(CecMetrics.RECOVERY_RECORDS_SCANNED), run.gaugeSum(CecMetrics.REPLAY_RECORDS),
                        run.gaugeMax(CecMetrics.RECOVERY_MILLIS), run.recoveryMillis);
            }
            if (!baseline.isBlank()) {
                BenchRun run = runWindowOperator(baseline, windows, events, failAtEvent, checkpointMillis);
                table.row(
                        "WindowOperator/" + baseline, MarkdownTable.count(windows), MarkdownTable.count(events),
                        "-", "-", "-", "-",
                        checkpointMillis(run, 0.5), checkpointMillis(run, 0.99), checkpointMillis(run, 1.0), "-", "-",
                        MarkdownTable.count(run.eventsPerSecond()), "-", "-", "-", run.recoveryMillis);
            }
        }
        table.print();
    }

    /** A quantile of Flink's end-to-end checkpoint durations (1.0: the longest). */
    private static long checkpointMillis(BenchRun run, double q) {
        return q == 1.0 ? run.checkpointMillis.getMaximum() : Math.round(run.checkpointMillis.getQuantile(q));
    }

    private KeyedStream<Tuple2<String, Long>, String> input(
            StreamExecutionEnvironment env, int windows, long events, long failAt) {
        // The words in turn: after the first `windows` events every word has its window open.
        return BenchCluster.keyed(WordCountJob.generated(env, events, i -> Tuple2.of("w" + (i % windows), i), 0), failAt);
    }

    private static TumblingEventTimeWindows openToTheEnd() {
        return TumblingEventTimeWindows.of(Duration.ofDays(365));
    }

    private BenchRun run(CecMode mode, int windows, long events, long failAt, long checkpointMillis)
            throws Exception {
        StreamExecutionEnvironment env = cluster.env("hashmap", checkpointMillis);
        CecOptions options = CecOptions.builder(cluster.logPath())
                .mode(mode)
                .period(Duration.ofMillis(events / 2))
                .slowThreshold(Duration.ofMillis(events / 4))
                .build();
        CecWindows.of(input(env, windows, events, failAt))
                .window(openToTheEnd())
                .aggregate(new WordCountJob.Count(), options)
                .name(BenchCluster.WINDOW)
                .addSink(new DiscardingSink<>());
        return cluster.execute(env, events);
    }

    private BenchRun runWindowOperator(String backend, int windows, long events, long failAt, long checkpointMillis)
            throws Exception {
        StreamExecutionEnvironment env = cluster.env(backend, checkpointMillis);
        input(env, windows, events, failAt).window(openToTheEnd()).aggregate(new WordCountJob.Count())
                .name(BenchCluster.WINDOW).addSink(new DiscardingSink<>());
        return cluster.execute(env, events);
    }
}
