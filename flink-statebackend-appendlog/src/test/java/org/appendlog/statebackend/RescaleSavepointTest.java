package org.appendlog.statebackend;

import org.apache.flink.api.common.JobID;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsSavepointStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Stop-with-savepoint of a per-key counting job on appendlog at parallelism 2, in both savepoint
 * formats, then restore at parallelism 3 and at 1: every key resumes from exactly the count it had
 * in the savepoint and ends at its exact count.
 */
class RescaleSavepointTest {

    private static final CountingJob JOB = new CountingJob(20_000, 4_000);

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    @TempDir Path tmp;

    @ParameterizedTest(name = "{0} savepoint")
    @EnumSource(
            value = SavepointFormatType.class,
            names = {"CANONICAL", "NATIVE"})
    void restoresAtHigherAndLowerParallelismWithExactCounts(
            SavepointFormatType format, @InjectClusterClient ClusterClient<?> client)
            throws Exception {
        Configuration config =
                CountingJob.withAppendLog(
                        CountingJob.jobConfig(tmp.resolve("checkpoints").toUri().toString()),
                        tmp.resolve("log").toUri().toString());
        EmittedCounts.take();
        PerKeyCounter.reset();

        JobID first =
                MiniClusterJobs.submit(
                        client, JOB.jobGraph(config, 2, SavepointRestoreSettings.none()));
        // Stop once incremental checkpoints exist and about a third of the input is counted.
        MiniClusterJobs.awaitWhileRunning(
                client,
                first,
                "two checkpoints and a third of the records",
                () ->
                        PerKeyCounter.completedCheckpoints().size() >= 2
                                && EmittedCounts.received() >= JOB.records() / 3);
        String savepoint =
                MiniClusterJobs.stopWithSavepoint(
                        client, first, tmp.resolve("savepoints").toUri().toString(), format);
        EmittedCounts beforeStop = EmittedCounts.take();
        assertThat(beforeStop.startsPerKey().values()).containsOnly(0L);
        Map<Integer, Long> inSavepoint = allKeys(beforeStop.maxPerKey());
        assertThat(sum(inSavepoint))
                .as("records counted before the savepoint (it must be taken mid-stream)")
                .isBetween(JOB.records() / 3, JOB.records() - 2L * CountingJob.KEYS);

        Class<? extends KeyedStateHandle> expectedHandle =
                format == SavepointFormatType.CANONICAL
                        ? KeyGroupsSavepointStateHandle.class
                        : IncrementalRemoteKeyedStateHandle.class;
        assertThat(SnapshotMetadata.load(savepoint).keyedStateHandles())
                .as("keyed state handles of the %s savepoint %s", format, savepoint)
                .isNotEmpty()
                .allMatch(expectedHandle::isInstance);

        for (int parallelism : new int[] {3, 1}) {
            JobID restored =
                    MiniClusterJobs.submit(
                            client,
                            JOB.jobGraph(
                                    config,
                                    parallelism,
                                    SavepointRestoreSettings.forPath(savepoint)));
            MiniClusterJobs.awaitSuccess(client, restored);
            EmittedCounts afterRestore = EmittedCounts.take();

            assertThat(afterRestore.attempts()).containsExactly(0);
            assertThat(afterRestore.startsPerKey())
                    .as("per key, the count restored at parallelism %d", parallelism)
                    .isEqualTo(inSavepoint);
            assertThat(afterRestore.maxPerKey())
                    .as("final count per key at parallelism %d", parallelism)
                    .isEqualTo(JOB.expectedCounts());
        }
    }

    /** The counts with 0 for keys that have none yet. */
    private static Map<Integer, Long> allKeys(Map<Integer, Long> counts) {
        Map<Integer, Long> all = new TreeMap<>();
        for (int key = 0; key < CountingJob.KEYS; key++) {
            all.put(key, counts.getOrDefault(key, 0L));
        }
        return all;
    }

    private static long sum(Map<Integer, Long> counts) {
        return counts.values().stream().mapToLong(Long::longValue).sum();
    }
}
