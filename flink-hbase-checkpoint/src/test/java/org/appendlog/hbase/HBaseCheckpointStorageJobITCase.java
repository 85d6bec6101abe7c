package org.appendlog.hbase;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.testutils.CommonTestUtils;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.function.SupplierWithException;

import org.apache.hadoop.hbase.client.Connection;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Flink jobs checkpointing to a real HBase: failover, retained checkpoints, cleanup, savepoints. */
class HBaseCheckpointStorageJobITCase {

    @RegisterExtension
    @Order(1)
    static final HBaseClusterExtension HBASE = new HBaseClusterExtension();

    @RegisterExtension
    @Order(2)
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(2)
                            .build());

    private static final String TABLE = "jobs_it";
    private static final int PARALLELISM = 2;

    /**
     * The keyed state backends the storage must work with, as values of {@code state.backend.type}.
     * The project's own backend joins as {@code "org.appendlog.statebackend.AppendLogStateBackendFactory"}
     * with flink-statebackend-appendlog as a test dependency.
     */
    static Stream<String> stateBackends() {
        return Stream.of(
                "hashmap", "rocksdb", "org.appendlog.statebackend.AppendLogStateBackendFactory");
    }

    @BeforeEach
    void resetJobCounters() {
        CountingJob.reset();
    }

    @TempDir static java.nio.file.Path appendLogDir;

    private static Configuration jobConfig(String backend) {
        Configuration conf = HBASE.storageOptions(TABLE);
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, HBaseCheckpointStorageFactory.class.getName());
        // Low, so that this small job's keyed state goes to HBase rows, while the few bytes of
        // some operator states stay inline: both kinds of handle are restored.
        conf.set(HBaseCheckpointStorageOptions.INLINE_THRESHOLD, MemorySize.parse("64b"));
        conf.set(StateBackendOptions.STATE_BACKEND, backend);
        // Only the appendlog backend reads it: where its state log lives (checkpoints stay in HBase).
        conf.setString("state.backend.appendlog.dir", appendLogDir.toUri().toString());
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(200));
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_ATTEMPTS, 3);
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofMillis(200));
        return conf;
    }

    private static StreamExecutionEnvironment environment(Configuration conf) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(PARALLELISM);
        return env;
    }

    /** Polls every 100 ms; fails after a minute instead of hanging the build. */
    private static void waitUntil(SupplierWithException<Boolean, Exception> condition) throws Exception {
        CommonTestUtils.waitUntilCondition(condition, 100L, 600);
    }

    private static Connection hbase() throws Exception {
        return HBASE.utility().getConnection();
    }

    private static long completedCheckpoints(MiniCluster cluster, JobID job) throws Exception {
        return cluster.getExecutionGraph(job).get().getCheckpointStatsSnapshot().getCounts().getNumberOfCompletedCheckpoints();
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stateBackends")
    void failureMidStreamEndsWithExactCountsAndJobEndLeavesNoRows(
            String backend, @InjectMiniCluster MiniCluster cluster) throws Exception {
        long records = 3_000;
        StreamExecutionEnvironment env = environment(jobConfig(backend));
        CountingJob.build(env, records, 1_000, records / PARALLELISM / 3);

        JobClient client = env.executeAsync("failover on " + backend);
        JobID job = client.getJobID();
        // While it runs, its checkpoints' state streams (not only their metadata) are rows.
        AtomicBoolean sawStateRows = new AtomicBoolean();
        waitUntil(
                () -> {
                    sawStateRows.compareAndSet(
                            false,
                            TableRows.rowsContaining(hbase(), TABLE, job.toString()).stream()
                                    .anyMatch(row -> !row.contains("/_metadata/")));
                    return sawStateRows.get() || client.getJobStatus().get().isTerminalState();
                });
        assertThat(sawStateRows).isTrue();
        client.getJobExecutionResult().get();

        assertThat(CountingJob.FAILURES_THROWN.get()).isGreaterThanOrEqualTo(1);
        assertThat(CountingJob.MAX_COUNT_PER_KEY).isEqualTo(CountingJob.expectedCounts(records));
        assertThat(completedCheckpoints(cluster, job)).isGreaterThanOrEqualTo(3);
        // Subsumed checkpoints were deleted on the way, the last ones when the job finished.
        // Discarding runs asynchronously after the job reached FINISHED.
        waitUntil(() -> TableRows.rowsContaining(hbase(), TABLE, job.toString()).isEmpty());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("stateBackends")
    void retainedCheckpointRestoresThroughItsHBasePointer(
            String backend, @InjectMiniCluster MiniCluster cluster) throws Exception {
        long records = 6_000;
        Configuration first = jobConfig(backend);
        first.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        StreamExecutionEnvironment env = environment(first);
        CountingJob.build(env, records, 1_000, 0);
        JobClient client = env.executeAsync("to be cancelled on " + backend);
        JobID job = client.getJobID();
        // Two checkpoints complete after 500 records were counted: the retained one holds them.
        waitUntil(
                () -> CountingJob.RECORDS_COUNTED.get() > 500
                        || client.getJobStatus().get().isTerminalState());
        long checkpointsBefore = completedCheckpoints(cluster, job);
        waitUntil(
                () -> completedCheckpoints(cluster, job) >= checkpointsBefore + 2
                        || client.getJobStatus().get().isTerminalState());
        assertThat(client.getJobStatus().get()).isEqualTo(JobStatus.RUNNING);

        // No savepoint directory is configured: asking for a savepoint fails and says what to set.
        assertThatThrownBy(() -> client.triggerSavepoint(null, SavepointFormatType.CANONICAL).get())
                .hasStackTraceContaining(CheckpointingOptions.SAVEPOINT_DIRECTORY.key());

        client.cancel().get();
        waitUntil(() -> client.getJobStatus().get() == JobStatus.CANCELED);
        CompletedCheckpointStats retained =
                cluster.getExecutionGraph(job).get().getCheckpointStatsSnapshot().getHistory().getLatestCompletedCheckpoint();
        String pointer = retained.getExternalPath();
        assertThat(pointer).isEqualTo("hbase://" + TABLE + "/" + job + "/chk-" + retained.getCheckpointId());
        long countedBeforeCancel = CountingJob.RECORDS_COUNTED.get();
        assertThat(countedBeforeCancel).isLessThan(records);
        // Only the retained checkpoint's rows are left: the subsumed ones were deleted.
        waitUntil(
                () -> TableRows.rowsContaining(hbase(), TABLE, job.toString()).stream()
                        .allMatch(row -> row.contains("/chk-" + retained.getCheckpointId() + "/")
                                || row.contains("/shared/")));

        CountingJob.reset();
        Configuration second = jobConfig(backend);
        second.set(StateRecoveryOptions.SAVEPOINT_PATH, pointer);
        StreamExecutionEnvironment restored = environment(second);
        CountingJob.build(restored, records, 5_000, 0);
        restored.execute("restored on " + backend + " from " + pointer);

        assertThat(CountingJob.MAX_COUNT_PER_KEY).isEqualTo(CountingJob.expectedCounts(records));
        // The new job resumed: it counted only what the retained checkpoint had not seen.
        assertThat(CountingJob.RECORDS_COUNTED.get()).isLessThan(records).isGreaterThan(0);
        // NO_CLAIM restore: the retained checkpoint still belongs to the user.
        assertThat(TableRows.rowsContaining(hbase(), TABLE, job + "/chk-" + retained.getCheckpointId() + "/"))
                .isNotEmpty();
    }

    @Test
    void savepointsGoToTheConfiguredFileSystemDirectoryAndRestore(@TempDir Path savepoints)
            throws Exception {
        long records = 3_000;
        Configuration conf = jobConfig("hashmap");
        conf.set(CheckpointingOptions.SAVEPOINT_DIRECTORY, savepoints.toUri().toString());
        StreamExecutionEnvironment env = environment(conf);
        CountingJob.build(env, records, 500, 0);
        JobClient client = env.executeAsync("savepoint");
        waitUntil(() -> CountingJob.RECORDS_COUNTED.get() > 100);

        String savepoint = client.triggerSavepoint(null, SavepointFormatType.CANONICAL).get();
        client.cancel().get();

        assertThat(savepoint).contains(savepoints.toString());
        assertThat(Files.size(Path.of(URI.create(savepoint)).resolve("_metadata"))).isPositive();

        CountingJob.reset();
        Configuration restore = jobConfig("hashmap");
        restore.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        StreamExecutionEnvironment restored = environment(restore);
        CountingJob.build(restored, records, 5_000, 0);
        restored.execute("restored from " + savepoint);

        assertThat(CountingJob.MAX_COUNT_PER_KEY).isEqualTo(CountingJob.expectedCounts(records));
        assertThat(CountingJob.RECORDS_COUNTED.get()).isLessThan(records);
    }
}
