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

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.groups.OperatorMetricGroup;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.util.TestStreamEnvironment;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Stream;

/**
 * Sweeps the CEC policy's period T and slow threshold H on a windowed word count, as the CEC
 * study did, and runs the same job on Flink's {@code WindowOperator} with the baseline state
 * backends. Prints one table; see the module README for how to run it and what was measured.
 *
 * <p>Per configuration it runs the job twice on an in-JVM MiniCluster: once without failures
 * (CHECK tuples, goodput, bytes persisted, Flink checkpoint size) and once with one failure
 * injected at a fixed fraction of the input (rebuild time of the CEC windows from the log, records
 * scanned, and the recovery time: from the failure until the restarted job has reprocessed the
 * input up to the failure point).
 *
 * <p>Arguments ({@code --name value}, all optional):
 *
 * <pre>
 *   --events 2000000         input events (event time advances 1 ms per event)
 *   --words 100000           distinct words (keys)
 *   --keys skewed            "skewed" (word k has frequency ~1/k: few hot, many rare windows) or "uniform"
 *   --window-size-s 600      sliding window size, event-time seconds
 *   --window-slide-s 150     sliding window slide, event-time seconds
 *   --checkpoint-ms 1000     Flink checkpoint interval
 *   --periods-ms 0,100,500   CEC T values (0 = CHECKs only at barriers)
 *   --thresholds-ms 200,1000 CEC H values
 *   --max-per-shot 1000      CEC M
 *   --baselines hashmap      state backends for Flink's WindowOperator; "appendlog" selects
 *                            org.appendlog.statebackend.AppendLogStateBackendFactory
 *   --fail-at 0.7            fraction of the input after which one failure is injected
 *   --parallelism 2
 *   --dir /tmp/cec-bench     scratch directory for logs and checkpoints (a sub-directory per run)
 *   --warm-up true           one unmeasured run of each operator first
 * </pre>
 */
public final class CecBenchmark {

    /** The appendlog backend's factory, selected by {@code --baselines appendlog}. */
    public static final String APPENDLOG_BACKEND_FACTORY = "org.appendlog.statebackend.AppendLogStateBackendFactory";

    static final AtomicLong FAIL_AT = new AtomicLong(-1);
    static final AtomicLong FAILED_NANOS = new AtomicLong();
    static final AtomicLong RECOVERED_NANOS = new AtomicLong();

    private final Map<String, String> args;
    private final long events;
    private final int words;
    private final int parallelism;
    private final long checkpointMillis;
    private final File dir;
    private final InMemoryReporter reporter = InMemoryReporter.createWithRetainedMetrics();
    private MiniCluster cluster;
    private File runDir;
    private int runs;

    private CecBenchmark(Map<String, String> args) {
        this.args = args;
        this.events = Long.parseLong(args.getOrDefault("events", "2000000"));
        this.words = Integer.parseInt(args.getOrDefault("words", "100000"));
        this.parallelism = Integer.parseInt(args.getOrDefault("parallelism", "2"));
        this.checkpointMillis = Long.parseLong(args.getOrDefault("checkpoint-ms", "1000"));
        this.dir = new File(args.getOrDefault("dir", System.getProperty("java.io.tmpdir") + "/cec-bench"));
    }

    public static void main(String[] argv) throws Exception {
        Map<String, String> args = new HashMap<>();
        for (int i = 0; i + 1 < argv.length; i += 2) {
            if (!argv[i].startsWith("--")) {
                throw new IllegalArgumentException("Expected --name value pairs, got '" + argv[i] + "'");
            }
            args.put(argv[i].substring(2), argv[i + 1]);
        }
        new CecBenchmark(args).run();
    }

    private void run() throws Exception {
        Configuration conf = reporter.addToConfiguration(new Configuration());
        cluster = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(parallelism + 1)
                .build());
        cluster.start();
        List<String[]> rows = new ArrayList<>();
        try {
            if (!args.getOrDefault("warm-up", "true").equals("false")) {
                // Warm up the JIT on both operators so the first measured row is not penalized.
                runCec(100, 1000, 1000, false);
                runWindowOperator("hashmap", false);
            }
            for (String t : args.getOrDefault("periods-ms", "0,100,500").split(",")) {
                for (String h : args.getOrDefault("thresholds-ms", "200,1000").split(",")) {
                    rows.add(cecRow(Long.parseLong(t), Long.parseLong(h)));
                    if (Long.parseLong(t) == 0) {
                        break; // H has no effect without the periodic policy
                    }
                }
            }
            for (String backend : args.getOrDefault("baselines", "hashmap").split(",")) {
                if (!backend.isBlank()) {
                    rows.add(windowOperatorRow(backend));
                }
            }
        } finally {
            cluster.close();
            if (runDir != null) {
                deleteQuietly(runDir.toPath());
            }
        }
        printTable(rows);
    }

    // ---------------------------------------------------------------------------------------------

    private WindowAssigner<Object, TimeWindow> windows() {
        return WordCountJob.windows(
                Duration.ofSeconds(Long.parseLong(args.getOrDefault("window-size-s", "600"))),
                Duration.ofSeconds(Long.parseLong(args.getOrDefault("window-slide-s", "150"))));
    }

    private StreamExecutionEnvironment env(String backend) throws IOException {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, backend.equals("appendlog") ? APPENDLOG_BACKEND_FACTORY : backend);
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, "filesystem");
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, new File(runDir, "checkpoints").toURI().toString());
        StreamExecutionEnvironment env =
                new TestStreamEnvironment(cluster, conf, parallelism, Collections.emptyList(), Collections.emptyList());
        env.enableCheckpointing(checkpointMillis);
        env.setRestartStrategy(RestartStrategies.fixedDelayRestart(1, 0));
        return env;
    }

    private KeyedStream<Tuple2<String, Long>, String> input(StreamExecutionEnvironment env, boolean withFailure) {
        FAIL_AT.set(withFailure ? (long) (events * Double.parseDouble(args.getOrDefault("fail-at", "0.7"))) : -1);
        FAILED_NANOS.set(0);
        RECOVERED_NANOS.set(0);
        boolean skewed = !args.getOrDefault("keys", "skewed").equals("uniform");
        // The failure is thrown in the window operator's task (the map is chained to it), so the
        // recovery time covers that task's restore and its replay up to the failure point.
        DataStream<Tuple2<String, Long>> failing =
                WordCountJob.words(env, events, this.words, 1, 0, skewed).keyBy(w -> w.f0).map(new FailOnce());
        return DataStreamUtils.reinterpretAsKeyedStream(failing, w -> w.f0);
    }

    private String[] cecRow(long t, long h) throws Exception {
        String m = args.getOrDefault("max-per-shot", "1000");
        Run clean = runCec(t, h, Integer.parseInt(m), false);
        Run failed = runCec(t, h, Integer.parseInt(m), true);
        return new String[] {
            "CEC", t == 0 ? "off" : t + "", t == 0 ? "-" : h + "", t == 0 ? "-" : m,
            clean.counter(CecMetrics.CHECK_TUPLES) + "", clean.counter(CecMetrics.BARRIER_CHECK_TUPLES) + "",
            clean.histogramMax(CecMetrics.BARRIER_MICROS) + "",
            String.format("%,.0f", events / (clean.millis / 1000.0)),
            String.format("%,d", clean.logBytes),
            clean.checkpoints + "",
            String.format("%,d", clean.maxCheckpointBytes),
            failed.gaugeMax(CecMetrics.RECOVERY_MILLIS) + "", failed.gaugeSum(CecMetrics.RECOVERY_RECORDS_SCANNED) + "",
            failed.recoveryMillis + ""
        };
    }

    private Run runCec(long t, long h, int m, boolean withFailure) throws Exception {
        nextRunDirectory();
        StreamExecutionEnvironment env = env("hashmap");
        CecOptions options =
                CecOptions.builder(new File(runDir, "log").toURI().toString())
                        .period(Duration.ofMillis(t))
                        .slowThreshold(Duration.ofMillis(h))
                        .maxWindowsPerShot(m)
                        .build();
        CecWindows.of(input(env, withFailure))
                .window(windows())
                .aggregate(new WordCountJob.Count(), options)
                .name("window")
                .addSink(new DiscardingSink<>());
        Run run = execute(env);
        run.logBytes = sizeOf(new File(runDir, "log").toPath());
        return run;
    }

    private String[] windowOperatorRow(String backend) throws Exception {
        Run clean;
        Run failed;
        try {
            clean = runWindowOperator(backend, false);
            failed = runWindowOperator(backend, true);
        } catch (Exception e) {
            System.err.println("Baseline '" + backend + "' did not run: " + rootMessage(e)
                    + (backend.equals("appendlog") ? " (put flink-statebackend-appendlog on the test classpath)" : ""));
            return new String[] {"WindowOperator/" + backend, "-", "-", "-", "-", "-", "-", "failed", "-", "-", "-", "-", "-", "-"};
        }
        return new String[] {
            "WindowOperator/" + backend, "-", "-", "-", "-", "-", "-",
            String.format("%,.0f", events / (clean.millis / 1000.0)),
            "-",
            clean.checkpoints + "",
            String.format("%,d", clean.maxCheckpointBytes),
            "-", "-",
            failed.recoveryMillis + ""
        };
    }

    private Run runWindowOperator(String backend, boolean withFailure) throws Exception {
        nextRunDirectory();
        StreamExecutionEnvironment env = env(backend);
        input(env, withFailure).window(windows()).aggregate(new WordCountJob.Count()).name("window")
                .addSink(new DiscardingSink<>());
        return execute(env);
    }

    private Run execute(StreamExecutionEnvironment env) throws Exception {
        long start = System.nanoTime();
        JobClient client = env.executeAsync("cec-benchmark");
        JobExecutionResult result = client.getJobExecutionResult().get();
        Run run = new Run();
        run.millis = (System.nanoTime() - start) / 1_000_000;
        run.job = result.getJobID();
        CheckpointStatsSnapshot stats = cluster.getExecutionGraph(run.job).get().getCheckpointStatsSnapshot();
        run.recoveryMillis = (RECOVERED_NANOS.get() - FAILED_NANOS.get()) / 1_000_000;
        run.checkpoints = stats.getCounts().getNumberOfCompletedCheckpoints();
        run.maxCheckpointBytes = stats.getSummaryStats().getStateSizeStats().getMaximum();
        return run;
    }

    /** Figures of one job run. */
    private final class Run {
        JobID job;
        long millis;
        long logBytes;
        long checkpoints;
        long recoveryMillis;
        long maxCheckpointBytes;

        private List<Map<String, Metric>> groups() {
            List<Map<String, Metric>> result = new ArrayList<>();
            for (OperatorMetricGroup group : reporter.findOperatorMetricGroups(job, "window")) {
                result.add(reporter.getMetricsByGroup(group));
            }
            return result;
        }

        long counter(String name) {
            return groups().stream().mapToLong(g -> g.containsKey(name) ? ((Counter) g.get(name)).getCount() : 0).sum();
        }

        long gaugeMax(String name) {
            return groups().stream().mapToLong(g -> gauge(g, name)).max().orElse(0);
        }

        long gaugeSum(String name) {
            return groups().stream().mapToLong(g -> gauge(g, name)).sum();
        }

        long histogramMax(String name) {
            return groups().stream()
                    .filter(g -> g.containsKey(name))
                    .mapToLong(g -> ((Histogram) g.get(name)).getStatistics().getMax())
                    .max()
                    .orElse(0);
        }

        private long gauge(Map<String, Metric> group, String name) {
            Metric m = group.get(name);
            return m == null ? 0 : ((Number) ((Gauge<?>) m).getValue()).longValue();
        }
    }

    private void printTable(List<String[]> rows) {
        String[] header = {
            "operator", "T ms", "H ms", "M", "CHECKs", "at barriers", "barrier max µs", "goodput ev/s", "log bytes",
            "ckpts", "max ckpt bytes", "rebuild ms", "records scanned", "recovery ms"
        };
        List<String[]> all = new ArrayList<>();
        all.add(header);
        all.addAll(rows);
        int[] width = new int[header.length];
        for (String[] row : all) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        System.out.printf(
                "%nCEC benchmark: %,d events, %,d words, sliding %s s / %s s event-time windows, parallelism %d, "
                        + "Flink checkpoint every %d ms, one failure after %s of the input, %s keys%n%n",
                events, words, args.getOrDefault("window-size-s", "600"), args.getOrDefault("window-slide-s", "150"),
                parallelism, checkpointMillis, args.getOrDefault("fail-at", "0.7"), args.getOrDefault("keys", "skewed"));
        for (String[] row : all) {
            StringBuilder line = new StringBuilder("| ");
            for (int i = 0; i < row.length; i++) {
                line.append(String.format(i == 0 ? "%-" + width[i] + "s" : "%" + width[i] + "s", row[i])).append(" | ");
            }
            System.out.println(line.toString().trim());
            if (row == header) {
                StringBuilder rule = new StringBuilder("|");
                for (int w : width) {
                    rule.append("-".repeat(w + 2)).append('|');
                }
                System.out.println(rule);
            }
        }
    }

    /**
     * Gives the next run a fresh scratch directory and deletes the previous one. Deletion is
     * lenient: the previous job's checkpoint cleanup may still be running in the background.
     */
    private void nextRunDirectory() throws IOException {
        if (runDir != null) {
            deleteQuietly(runDir.toPath());
        }
        runDir = new File(dir, "run-" + ++runs);
        Files.createDirectories(runDir.toPath());
    }

    private static void deleteQuietly(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Collections.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException | java.io.UncheckedIOException e) {
            // a concurrent checkpoint cleanup removed part of the tree; the rest is scratch space
        }
    }

    private static long sizeOf(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            return paths.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
    }

    private static String rootMessage(Throwable e) {
        Throwable t = e;
        while (t.getCause() != null) {
            t = t.getCause();
        }
        return t.toString();
    }

    /**
     * Throws when the event with the chosen index first passes (event time = index ms), and notes
     * when the restarted job has caught up to it again: that span is the recovery time.
     */
    static final class FailOnce implements MapFunction<Tuple2<String, Long>, Tuple2<String, Long>> {
        @Override
        public Tuple2<String, Long> map(Tuple2<String, Long> e) {
            if (e.f1 == FAIL_AT.get()) {
                if (FAILED_NANOS.compareAndSet(0, System.nanoTime())) {
                    throw new RuntimeException("Injected benchmark failure at event " + e.f1);
                }
                RECOVERED_NANOS.compareAndSet(0, System.nanoTime());
            }
            return e;
        }
    }
}
