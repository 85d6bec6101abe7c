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

package org.appendlog.hbase;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.HighAvailabilityOptions;
import org.apache.flink.configuration.JobManagerOptions;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.RestartStrategyOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.runtime.clusterframework.ApplicationStatus;
import org.apache.flink.runtime.highavailability.FileSystemJobResultStore;
import org.apache.flink.runtime.highavailability.JobResultEntry;
import org.apache.flink.runtime.highavailability.JobResultStoreOptions;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.testutils.CommonTestUtils;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;
import org.apache.flink.util.concurrent.Executors;

import org.apache.hadoop.hbase.client.Connection;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * With the HBase options only in the job's configuration (the cluster's names no HBase), every
 * row of a discarded checkpoint is deleted: by the job manager that runs the job, and by a
 * restarted job manager that only cleans up after a job that ended while no job manager ran.
 *
 * <p>The second is the case that needs the storage's help: Flink's cleanup-only runner rebuilds
 * the job's checkpoint store from the high-availability store and discards through {@code
 * FileSystem.get(hbase://...)}, but never creates the job's checkpoint storage.
 */
class JobConfiguredStorageCleanupITCase {

    @RegisterExtension static final HBaseClusterExtension HBASE = new HBaseClusterExtension();

    private static final String TABLE = "job_configured";
    private static final int PARALLELISM = 2;
    /** Enough for RocksDB to compact its first files away, so older checkpoints' shared rows go. */
    private static final int CHECKPOINTS = 6;

    @TempDir Path work;

    /** The cluster: ZooKeeper high availability on HBase's ZooKeeper, and nothing about HBase storage. */
    private Configuration clusterConfig() {
        Configuration conf = new Configuration();
        conf.set(HighAvailabilityOptions.HA_MODE, "zookeeper");
        conf.set(HighAvailabilityOptions.HA_ZOOKEEPER_QUORUM, HBASE.zookeeperQuorum());
        conf.set(HighAvailabilityOptions.HA_STORAGE_PATH, work.resolve("ha").toUri().toString());
        conf.set(HighAvailabilityOptions.HA_CLUSTER_ID, "cleanup-it");
        conf.set(JobResultStoreOptions.DELETE_ON_COMMIT, false);
        conf.set(RestOptions.BIND_PORT, "0");
        conf.set(JobManagerOptions.PORT, 0);
        conf.set(JobManagerOptions.ADDRESS, "localhost");
        return conf;
    }

    private static Configuration jobConfig() {
        Configuration conf = HBASE.storageOptions(TABLE);
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, HBaseCheckpointStorageFactory.class.getName());
        // Low, so that RocksDB's files, shared ones included, become rows.
        conf.set(HBaseCheckpointStorageOptions.INLINE_THRESHOLD, MemorySize.parse("64b"));
        conf.set(StateBackendOptions.STATE_BACKEND, "rocksdb");
        conf.set(CheckpointingOptions.INCREMENTAL_CHECKPOINTS, true);
        conf.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 1);
        // Only the test's triggers checkpoint, so that none is in flight when the job manager
        // stops: Flink registers shared state when a task acknowledges it, in memory, so what an
        // aborted checkpoint uploaded is known to no later job manager (on any storage).
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofHours(1));
        conf.set(CheckpointingOptions.MIN_PAUSE_BETWEEN_CHECKPOINTS, Duration.ofHours(1));
        // Closing the mini cluster stops the task manager before the job manager: the job must
        // wait for a restart then, so that the job manager suspends it instead of failing it.
        conf.set(RestartStrategyOptions.RESTART_STRATEGY, "fixed-delay");
        conf.set(RestartStrategyOptions.RESTART_STRATEGY_FIXED_DELAY_DELAY, Duration.ofHours(1));
        return conf;
    }

    @Test
    void runningAndRestartedCleanupOnlyJobManagersDeleteDiscardedCheckpointsRows() throws Exception {
        Configuration cluster = clusterConfig();
        FileSystemJobResultStore jobResults =
                FileSystemJobResultStore.fromConfiguration(cluster, Executors.directExecutor());
        MiniCluster flink =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(cluster)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(PARALLELISM)
                                .build());
        flink.start();
        JobID job;
        String retainedPointer = null;
        try {
            TestStreamEnvironment.setAsContext(flink, PARALLELISM);
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(jobConfig());
            CountingJob.build(env, Long.MAX_VALUE, 2_000, 0);
            job = env.executeAsync("job-configured HBase storage").getJobID();
            CommonTestUtils.waitForAllTaskRunning(flink, job, false);
            for (int i = 0; i < CHECKPOINTS; i++) {
                retainedPointer = flink.triggerCheckpoint(job).get();
            }
            // What a job manager leaves behind when it dies after recording that the job ended
            // and before cleaning up after it.
            jobResults
                    .createDirtyResultAsync(
                            new JobResultEntry(
                                    new JobResult.Builder()
                                            .jobId(job)
                                            .applicationStatus(ApplicationStatus.CANCELED)
                                            .netRuntime(1)
                                            .build()))
                    .get();
        } finally {
            TestStreamEnvironment.unsetAsContext();
            // Suspends the job and keeps its checkpoints in ZooKeeper; returns once the discards
            // the job manager started have run.
            flink.closeAsyncWithoutCleaningHighAvailabilityData().get();
        }

        // The running job manager deleted every subsumed checkpoint's rows, shared ones included.
        CompletedCheckpointStorageLocation retained =
                new HBaseCheckpointStorageFactory()
                        .createFromConfig(jobConfig(), getClass().getClassLoader())
                        .resolveCheckpoint(retainedPointer);
        Map<String, Long> needed = CheckpointStreams.of(retained);
        assertThat(needed.keySet()).anyMatch(stream -> stream.contains("/shared/"));
        assertThat(TableRows.streamBytes(hbase(), TABLE, job.toString())).isEqualTo(needed);
        // Each stream fits one chunk row and has its length row (the metadata's commits it).
        assertThat(TableRows.rowsContaining(hbase(), TABLE, job.toString())).hasSize(2 * needed.size());

        JobManagerProcess restarted = JobManagerProcess.start(cluster, work.resolve("restarted"));
        try {
            CommonTestUtils.waitUntilCondition(
                    () -> jobResults.hasCleanJobResultEntryAsync(job).get() || !restarted.isAlive(),
                    100L,
                    1200);
            assertThat(restarted.isAlive()).as("job manager exited:\n%s", restarted.logTail()).isTrue();
            // Flink deletes shared state on its own executor, which the clean result does not
            // wait for: give those deletes time before the process stops.
            long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
            while (!TableRows.rowsContaining(hbase(), TABLE, job.toString()).isEmpty()
                    && System.nanoTime() < deadline) {
                Thread.sleep(100);
            }
        } finally {
            restarted.close();
        }
        assertThat(TableRows.rowsContaining(hbase(), TABLE, job.toString()))
                .as("rows of the cancelled job left; restarted job manager's log:\n%s", restarted.logTail())
                .isEmpty();
    }

    private static Connection hbase() throws Exception {
        return HBASE.utility().getConnection();
    }
}
