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

package org.appendlog.statebackend;

import org.appendlog.testing.SlowDown;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.changelog.fs.FsStateChangelogOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateChangelogOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.Map;
import java.util.TreeMap;

/**
 * The workload of the job-level tests: the numbers 0 .. records-1 from a rate-limited,
 * checkpointed source (so a restore replays exactly what the checkpoint had not yet covered), keyed
 * by {@code n % KEYS}, counted per key in keyed {@code ValueState<Long>} ({@link PerKeyCounter}),
 * every new count sent to {@link CollectingSink} (through a {@link SlowDown} if the job has one).
 * Operators carry uids, so savepoints and checkpoints restore into the job at any parallelism.
 */
final class CountingJob {

    static final int KEYS = 200;
    static final int MAX_PARALLELISM = 128;
    static final Duration CHECKPOINT_INTERVAL = Duration.ofMillis(200);

    private final long records;
    private final double recordsPerSecond;
    @Nullable private final FailOnce failure;
    @Nullable private final SlowDown<CountUpdate> slowDown;

    CountingJob(long records, double recordsPerSecond) {
        this(records, recordsPerSecond, null, null);
    }

    private CountingJob(
            long records,
            double recordsPerSecond,
            @Nullable FailOnce failure,
            @Nullable SlowDown<CountUpdate> slowDown) {
        this.records = records;
        this.recordsPerSecond = recordsPerSecond;
        this.failure = failure;
        this.slowDown = slowDown;
    }

    /** The same job with {@code failure} right after the source. */
    CountingJob failingWith(FailOnce failure) {
        return new CountingJob(records, recordsPerSecond, failure, slowDown);
    }

    /**
     * The same job with {@code slowDown} chained to the counting operator, before the sink: the
     * counting tasks fall behind the source, so records wait in the network between them.
     */
    CountingJob slowedDownBy(SlowDown<CountUpdate> slowDown) {
        return new CountingJob(records, recordsPerSecond, failure, slowDown);
    }

    long records() {
        return records;
    }

    /**
     * Job options shared by all runs: checkpoints every 200 ms into {@code checkpointDir} and no
     * restarts (a test that wants restarts sets them).
     */
    static Configuration jobConfig(String checkpointDir) {
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, CHECKPOINT_INTERVAL);
        config.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, checkpointDir);
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "none");
        return config;
    }

    /** Lets the job restart up to three times, 100 ms after a failure (the tests inject one). */
    static Configuration withRestarts(Configuration config) {
        config.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        config.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        config.set(
                RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(100));
        return config;
    }

    /**
     * {@link #jobConfig} with checkpoints in {@code dir}/checkpoints, on the append-log backend
     * with its log in {@code dir}/log.
     */
    static Configuration appendLogConfig(java.nio.file.Path dir) {
        return withAppendLog(
                jobConfig(dir.resolve("checkpoints").toUri().toString()),
                dir.resolve("log").toUri().toString());
    }

    /** Selects the append-log backend by configuration, as flink-conf.yaml would. */
    static Configuration withAppendLog(Configuration config, String logDir) {
        config.set(StateBackendOptions.STATE_BACKEND, AppendLogStateBackendFactory.class.getName());
        config.set(AppendLogOptions.LOG_DIR, logDir);
        return config;
    }

    /**
     * Selects {@code backend}: {@code appendlog} with its log in {@code logDir}, or a backend of
     * Flink's by its name ({@code hashmap}, {@code rocksdb}).
     */
    static Configuration withBackend(Configuration config, String backend, String logDir) {
        if (backend.equals("appendlog")) {
            return withAppendLog(config, logDir);
        }
        config.set(StateBackendOptions.STATE_BACKEND, backend);
        return config;
    }

    /**
     * Where Flink's changelog backend, if a job enables it, stores the changelog: files below
     * {@code baseDir} ({@code state.changelog.storage: filesystem} and, in 1.20,
     * {@code state.changelog.dstl.dfs.base-path}, formerly {@code dstl.dfs.base-path}). The task
     * managers read these, so they go into the cluster's configuration.
     */
    static Configuration withChangelogStorage(Configuration config, String baseDir) {
        config.set(StateChangelogOptions.STATE_CHANGE_LOG_STORAGE, "filesystem");
        config.set(FsStateChangelogOptions.BASE_PATH, baseDir);
        return config;
    }

    /**
     * Enables Flink's changelog backend over the configured one ({@code state.changelog.enabled}),
     * materializing the state through the wrapped backend's snapshots every 300 ms, so that a
     * restore mid-stream reads a materialization and replays only the changelog after it.
     */
    static Configuration withChangelog(Configuration jobConfig) {
        jobConfig.set(StateChangelogOptions.ENABLE_STATE_CHANGE_LOG, true);
        jobConfig.set(
                StateChangelogOptions.PERIODIC_MATERIALIZATION_INTERVAL, Duration.ofMillis(300));
        return jobConfig;
    }

    JobGraph jobGraph(Configuration jobConfig, int parallelism, SavepointRestoreSettings restore) {
        StreamExecutionEnvironment env = new StreamExecutionEnvironment(jobConfig);
        env.setParallelism(parallelism);
        env.setMaxParallelism(MAX_PARALLELISM);

        DataStream<Long> numbers =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        n -> n,
                                        records,
                                        RateLimiterStrategy.perSecond(recordsPerSecond),
                                        Types.LONG),
                                WatermarkStrategy.noWatermarks(),
                                "numbers")
                        .uid("numbers");
        if (failure != null) {
            numbers = numbers.map(failure).uid("fail-once").name("fail-once");
        }
        DataStream<CountUpdate> counts =
                numbers.keyBy(n -> (int) (n % KEYS), Types.INT)
                        .process(new PerKeyCounter())
                        .uid("count-per-key")
                        .name("count-per-key");
        if (slowDown != null) {
            counts = counts.map(slowDown).uid("slow-down").name("slow-down");
        }
        counts.addSink(new CollectingSink())
                .uid("collect")
                .name("collect");

        JobGraph jobGraph = env.getStreamGraph().getJobGraph();
        jobGraph.setSavepointRestoreSettings(restore);
        return jobGraph;
    }

    /** Per key, the count once every record has been counted exactly once. */
    Map<Integer, Long> expectedCounts() {
        Map<Integer, Long> expected = new TreeMap<>();
        for (int key = 0; key < KEYS; key++) {
            expected.put(key, records / KEYS + (key < records % KEYS ? 1 : 0));
        }
        return expected;
    }
}
