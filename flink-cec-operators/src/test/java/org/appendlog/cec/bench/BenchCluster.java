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

import org.apache.flink.api.common.JobExecutionResult;
import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.DataStreamUtils;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;

import java.io.File;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.stream.Stream;

/**
 * The in-JVM MiniCluster the benchmarks run their jobs on, with a fresh scratch directory per
 * run (its checkpoints and CEC log) and a metric reporter that keeps every attempt's metrics.
 */
final class BenchCluster implements AutoCloseable {

    /** The appendlog backend's factory, selected by the baseline name {@code appendlog}. */
    static final String APPENDLOG_BACKEND_FACTORY = "org.appendlog.statebackend.AppendLogStateBackendFactory";

    /** The name every benchmark job gives its window operator; its metrics are read by it. */
    static final String WINDOW = "window";

    final InMemoryReporter reporter = InMemoryReporter.createWithRetainedMetrics();
    private final MiniCluster cluster;
    private final int parallelism;
    private final File dir;
    private File runDir;
    private int runs;

    BenchCluster(File dir, int parallelism) throws Exception {
        // Its own directory: an interrupted earlier run may have left its run directories behind.
        Files.createDirectories(dir.toPath());
        this.dir = Files.createTempDirectory(dir.toPath(), "bench-").toFile();
        this.parallelism = parallelism;
        Configuration conf = reporter.addToConfiguration(new Configuration());
        conf.set(RestOptions.BIND_PORT, "0"); // any free port: other Flink processes may hold 8081
        cluster = new MiniCluster(new MiniClusterConfiguration.Builder()
                .setConfiguration(conf)
                .setNumTaskManagers(1)
                .setNumSlotsPerTaskManager(parallelism + 1)
                .build());
        cluster.start();
    }

    int parallelism() {
        return parallelism;
    }

    /**
     * An environment for the next run, in a fresh scratch directory: the keyed state backend
     * ({@code hashmap}, {@code rocksdb} or {@code appendlog}), checkpoints every {@code
     * checkpointMillis} to the directory, one restart without delay.
     */
    StreamExecutionEnvironment env(String backend, long checkpointMillis) throws IOException {
        if (runDir != null) {
            deleteQuietly(runDir.toPath());
        }
        runDir = new File(dir, "run-" + ++runs);
        Files.createDirectories(runDir.toPath());
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

    /** The current run's CEC log directory. */
    String logPath() {
        return new File(runDir, "log").toURI().toString();
    }

    /**
     * The words keyed by word, failing once at event {@code failAt} (negative: never) in the
     * window operator's task ({@link FailOnce} is chained to it).
     */
    static KeyedStream<Tuple2<String, Long>, String> keyed(DataStream<Tuple2<String, Long>> words, long failAt) {
        FailOnce.arm(failAt);
        DataStream<Tuple2<String, Long>> failing = words.keyBy(w -> w.f0).map(new FailOnce());
        return DataStreamUtils.reinterpretAsKeyedStream(failing, w -> w.f0);
    }

    /** Runs the job to its end and collects its figures. */
    BenchRun execute(StreamExecutionEnvironment env, long events) throws Exception {
        long start = System.nanoTime();
        JobExecutionResult result = env.executeAsync("cec-benchmark").getJobExecutionResult().get();
        long millis = (System.nanoTime() - start) / 1_000_000;
        File log = new File(runDir, "log");
        return new BenchRun(
                reporter,
                result.getJobID(),
                events,
                millis,
                cluster.getExecutionGraph(result.getJobID()).get().getCheckpointStatsSnapshot(),
                FailOnce.recoveryMillis(),
                log.exists() ? sizeOf(log.toPath()) : 0);
    }

    @Override
    public void close() throws Exception {
        try {
            cluster.close();
        } finally {
            deleteQuietly(dir.toPath());
        }
    }

    /** Lenient: the previous job's checkpoint cleanup may still be running in the background. */
    private static void deleteQuietly(Path root) {
        try (Stream<Path> paths = Files.walk(root)) {
            paths.sorted(Collections.reverseOrder()).map(Path::toFile).forEach(File::delete);
        } catch (IOException | UncheckedIOException e) {
            // a concurrent checkpoint cleanup removed part of the tree; the rest is scratch space
        }
    }

    private static long sizeOf(Path root) throws IOException {
        try (Stream<Path> paths = Files.walk(root)) {
            return paths.filter(Files::isRegularFile).mapToLong(p -> p.toFile().length()).sum();
        }
    }
}
