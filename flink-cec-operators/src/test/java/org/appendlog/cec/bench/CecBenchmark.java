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
import org.appendlog.cec.api.CecConfigOptions;
import org.appendlog.cec.api.CecMode;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.cec.operator.CecMetrics;

import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import java.io.File;
import java.time.Duration;

/**
 * The CEC benchmarks; {@code --suite} picks one, each prints its tables (see the module README
 * for how to run them and what was measured):
 *
 * <ul>
 *   <li>{@code sweep} (default): the CEC policy's period T and slow threshold H on the sliding
 *       word count, and the same job on Flink's {@code WindowOperator} with the baseline backends.
 *   <li>{@code barriers}: {@link BarrierCost}, per mode at 1 000 to 1 000 000 open windows.
 *   <li>{@code figures}: {@link OpenOverhead} (the paper's Fig. 4.3) and {@link CheckVolume}
 *       (Fig. 4.4).
 *   <li>{@code speed}: {@link SpeedTarget}, eventual CEC against the {@code WindowOperator} in
 *       paired rounds.
 * </ul>
 *
 * <p>The sweep runs each configuration twice: once without failures (CHECK tuples, goodput,
 * bytes persisted, Flink checkpoint size) and once with one failure injected at a fixed fraction
 * of the input (rebuild time of the CEC windows from the log, records scanned, and the time from
 * the failure to caught-up).
 *
 * <p>Arguments of every suite ({@code --name value}, all optional):
 *
 * <pre>
 *   --suite sweep            sweep, barriers, figures or speed
 *   --checkpoint-ms 1000     Flink checkpoint interval
 *   --parallelism 2
 *   --dir (java.io.tmpdir)/cec-bench  scratch directory for logs and checkpoints (a sub-directory per run)
 *   --warm-up true           one unmeasured run of each operator first
 * </pre>
 *
 * <p>Of the sliding word count ({@code sweep}, {@code speed}):
 *
 * <pre>
 *   --events 2000000         input events (event time advances 1 ms per event)
 *   --words 100000           distinct words (keys)
 *   --keys skewed            "skewed" (word k has frequency ~1/k: few hot, many rare windows) or "uniform"
 *   --window-size-s 600      sliding window size, event-time seconds
 *   --window-slide-s 150     sliding window slide, event-time seconds
 *   --fail-at 0.7            fraction of the input after which one failure is injected
 * </pre>
 *
 * <p>Of the sweep:
 *
 * <pre>
 *   --mode eventual          cec.mode: eventual, open-only or barrier
 *   --periods-ms 0,100,500   CEC T values (0: the policy off)
 *   --thresholds-ms 200,1000 CEC H values
 *   --max-per-shot 1000      CEC M
 *   --baselines hashmap      state backends for Flink's WindowOperator; "appendlog" selects
 *                            org.appendlog.statebackend.AppendLogStateBackendFactory
 * </pre>
 */
public final class CecBenchmark {

    private final BenchArgs args;
    private final BenchCluster cluster;

    CecBenchmark(BenchArgs args, BenchCluster cluster) {
        this.args = args;
        this.cluster = cluster;
    }

    public static void main(String[] argv) throws Exception {
        BenchArgs args = new BenchArgs(argv);
        File dir = new File(args.string("dir", System.getProperty("java.io.tmpdir") + "/cec-bench"));
        try (BenchCluster cluster = new BenchCluster(dir, args.intValue("parallelism", 2))) {
            String suite = args.string("suite", "sweep");
            switch (suite) {
                case "sweep":
                    new CecBenchmark(args, cluster).sweep();
                    break;
                case "barriers":
                    new BarrierCost(args, cluster).run();
                    break;
                case "figures":
                    new OpenOverhead(args, cluster).run();
                    new CheckVolume(args, cluster).run();
                    break;
                case "speed":
                    new SpeedTarget(args, cluster).run();
                    break;
                default:
                    throw new IllegalArgumentException(
                            "--suite must be sweep, barriers, figures or speed, got '" + suite + "'");
            }
        }
    }

    private void sweep() throws Exception {
        if (args.flag("warm-up", true)) {
            // Warm up the JIT on both operators so the first measured row is not penalized; the policy
            // off, since T and H at their defaults are short for event time that advances this fast.
            runCec(CecOptions.builder("").period(Duration.ZERO), false);
            runWindowOperator("hashmap", false);
        }
        MarkdownTable table = new MarkdownTable(
                String.format(
                        "CEC benchmark: %s, Flink checkpoint every %d ms, one failure after %s of the input, cec.mode %s",
                        description(), checkpointMillis(), args.string("fail-at", "0.7"), args.string("mode", "eventual")),
                "operator", "T ms", "H ms", "M", "CHECKs", "at barriers", "barrier max µs", "goodput ev/s",
                "log bytes", "ckpts", "max ckpt bytes", "rebuild ms", "records scanned", "recovery ms");
        String m = args.string("max-per-shot", "1000");
        for (String t : args.string("periods-ms", "0,100,500").split(",")) {
            for (String h : args.string("thresholds-ms", "200,1000").split(",")) {
                long period = Long.parseLong(t);
                CecOptions.Builder options = CecOptions.builder("")
                        .mode(mode(args.string("mode", "eventual")))
                        .period(Duration.ofMillis(period))
                        .slowThreshold(Duration.ofMillis(Long.parseLong(h)))
                        .maxWindowsPerShot(Integer.parseInt(m));
                BenchRun clean = runCec(options, false);
                BenchRun failed = runCec(options, true);
                table.row(
                        "CEC", period == 0 ? "off" : t, period == 0 ? "-" : h, period == 0 ? "-" : m,
                        clean.counter(CecMetrics.CHECK_TUPLES), clean.counter(CecMetrics.BARRIER_CHECK_TUPLES),
                        BenchRun.quantile(clean.histogramValues(CecMetrics.BARRIER_MICROS), 1.0),
                        MarkdownTable.count(clean.eventsPerSecond()), MarkdownTable.count(clean.logBytes),
                        clean.checkpoints, MarkdownTable.count(clean.maxCheckpointBytes),
                        failed.gaugeMax(CecMetrics.RECOVERY_MILLIS),
                        failed.gaugeSum(CecMetrics.RECOVERY_RECORDS_SCANNED), failed.recoveryMillis);
                if (period == 0) {
                    break; // H has no effect without the periodic policy
                }
            }
        }
        for (String backend : args.string("baselines", "hashmap").split(",")) {
            if (backend.isBlank()) {
                continue;
            }
            BenchRun clean = runWindowOperator(backend, false);
            BenchRun failed = runWindowOperator(backend, true);
            table.row(
                    "WindowOperator/" + backend, "-", "-", "-", "-", "-", "-",
                    MarkdownTable.count(clean.eventsPerSecond()), "-", clean.checkpoints,
                    MarkdownTable.count(clean.maxCheckpointBytes), "-", "-", failed.recoveryMillis);
        }
        table.print();
    }

    /** A {@code cec.mode} by its configuration value. */
    static CecMode mode(String value) {
        for (CecMode mode : CecMode.values()) {
            if (mode.toString().equals(value)) {
                return mode;
            }
        }
        throw new IllegalArgumentException("Unknown cec.mode '" + value + "': eventual, open-only or barrier");
    }

    // ---------------------------------------------------------------------------------------------
    // The sliding word count, shared with SpeedTarget
    // ---------------------------------------------------------------------------------------------

    long events() {
        return args.longValue("events", 2_000_000);
    }

    long checkpointMillis() {
        return args.longValue("checkpoint-ms", 1000);
    }

    String description() {
        return String.format(
                "%,d events, %,d words (%s), sliding %s s / %s s event-time windows, parallelism %d",
                events(), args.intValue("words", 100_000), args.string("keys", "skewed"),
                args.string("window-size-s", "600"), args.string("window-slide-s", "150"), cluster.parallelism());
    }

    private WindowAssigner<Object, TimeWindow> windows() {
        return WordCountJob.windows(
                Duration.ofSeconds(args.longValue("window-size-s", 600)),
                Duration.ofSeconds(args.longValue("window-slide-s", 150)));
    }

    private KeyedStream<Tuple2<String, Long>, String> input(StreamExecutionEnvironment env, boolean withFailure) {
        long events = events();
        boolean skewed = !args.string("keys", "skewed").equals("uniform");
        return BenchCluster.keyed(
                WordCountJob.words(env, events, args.intValue("words", 100_000), 1, 0, skewed),
                withFailure ? (long) (events * args.doubleValue("fail-at", 0.7)) : -1);
    }

    /** The word count on the CEC operator; {@code options} are completed with the run's log path. */
    BenchRun runCec(CecOptions.Builder options, boolean withFailure) throws Exception {
        StreamExecutionEnvironment env = cluster.env("hashmap", checkpointMillis());
        CecWindows.of(input(env, withFailure))
                .window(windows())
                .aggregate(new WordCountJob.Count(), options.set(CecConfigOptions.LOG_PATH, cluster.logPath()).build())
                .name(BenchCluster.WINDOW)
                .addSink(new DiscardingSink<>());
        return cluster.execute(env, events());
    }

    /** The word count on Flink's window operator with the given keyed state backend. */
    BenchRun runWindowOperator(String backend, boolean withFailure) throws Exception {
        StreamExecutionEnvironment env = cluster.env(backend, checkpointMillis());
        input(env, withFailure).window(windows()).aggregate(new WordCountJob.Count()).name(BenchCluster.WINDOW)
                .addSink(new DiscardingSink<>());
        return cluster.execute(env, events());
    }
}
