package org.appendlog.statebackend;

import org.apache.flink.api.common.JobID;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.core.execution.RestoreMode;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Comparator;
import java.util.Map;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A retained (externalized) appendlog checkpoint restores in NO_CLAIM and in CLAIM mode with exact
 * counts. NO_CLAIM: the first checkpoint after the restore refers to no file of the restored
 * checkpoint, and the restored checkpoint stays intact. CLAIM: the job takes the checkpoint over,
 * builds its next checkpoint on the claimed segments and, once finished, frees them.
 */
class RestoreModeTest {

    private static final int PARALLELISM = 2;
    private static final CountingJob JOB = new CountingJob(16_000, 4_000);

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(4)
                            .build());

    @TempDir Path tmp;

    @Test
    void retainedCheckpointRestoresInNoClaimThenInClaimMode(
            @InjectClusterClient ClusterClient<?> client) throws Exception {
        Configuration config =
                CountingJob.withAppendLog(
                        CountingJob.jobConfig(checkpointDir().toUri().toString()),
                        tmp.resolve("log").toUri().toString());
        config.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);

        JobID first = CountingJobRuns.startAndAwaitProgress(client, JOB, config, PARALLELISM);
        client.cancel(first).get(MiniClusterJobs.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        client.requestJobResult(first)
                .get(MiniClusterJobs.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        Map<Integer, Long> emittedBeforeCancel = EmittedCounts.take().maxPerKey();

        List<Path> retainedCheckpoints = checkpointsOf(first);
        assertThat(retainedCheckpoints).as("retained checkpoints of %s", first).isNotEmpty();
        Path retained = retainedCheckpoints.get(retainedCheckpoints.size() - 1);
        SnapshotMetadata retainedMeta = SnapshotMetadata.load(retained.toUri().toString());
        assertThat(retainedMeta.keyedStateHandles())
                .as("keyed state of the retained checkpoint %s", retained)
                .isNotEmpty()
                .allMatch(IncrementalRemoteKeyedStateHandle.class::isInstance);
        assertThat(retainedMeta.sharedFiles()).as("segments of %s", retained).isNotEmpty();
        Set<String> retainedFiles = new TreeSet<>(retainedMeta.sharedFiles());
        retainedFiles.addAll(retainedMeta.privateFiles());

        // The restored jobs keep every checkpoint until they end, so the first one can be read.
        Configuration restoredConfig = new Configuration(config);
        restoredConfig.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 100);

        // NO_CLAIM
        JobID noClaim =
                CountingJobRuns.submitRestored(
                        client,
                        JOB,
                        restoredConfig,
                        PARALLELISM,
                        SavepointRestoreSettings.forPath(
                                retained.toUri().toString(), false, RestoreMode.NO_CLAIM));
        SnapshotMetadata afterNoClaim = firstCheckpointOf(client, noClaim);
        assertThat(afterNoClaim.checkpointId()).isGreaterThan(retainedMeta.checkpointId());
        assertThat(afterNoClaim.sharedFiles())
                .as("segments of the first checkpoint after the NO_CLAIM restore, %s", afterNoClaim)
                .isNotEmpty()
                .doesNotContainAnyElementsOf(retainedFiles);
        assertThat(afterNoClaim.privateFiles()).doesNotContainAnyElementsOf(retainedFiles);
        CountingJobRuns.Resumed noClaimRun = CountingJobRuns.awaitExactEnd(client, JOB, noClaim);

        noClaimRun.restored.forEach(
                (key, count) ->
                        assertThat(count)
                                .as("restored count of key %d", key)
                                .isLessThanOrEqualTo(emittedBeforeCancel.getOrDefault(key, 0L)));
        assertThat(noClaimRun.restored.values().stream().mapToLong(Long::longValue).sum())
                .as("records covered by the retained checkpoint")
                .isPositive();
        assertThat(retainedFiles)
                .as("files of the retained checkpoint after the NO_CLAIM job finished")
                .allMatch(f -> Files.exists(Paths.get(f)));

        // CLAIM, from the same checkpoint, which NO_CLAIM left intact
        JobID claim =
                CountingJobRuns.submitRestored(
                        client,
                        JOB,
                        restoredConfig,
                        PARALLELISM,
                        SavepointRestoreSettings.forPath(
                                retained.toUri().toString(), false, RestoreMode.CLAIM));
        SnapshotMetadata afterClaim = firstCheckpointOf(client, claim);
        assertThat(afterClaim.sharedFiles())
                .as("the first checkpoint after the CLAIM restore, %s, builds on the claimed"
                        + " segments", afterClaim)
                .containsAnyElementsOf(retainedMeta.sharedFiles());
        CountingJobRuns.Resumed claimRun = CountingJobRuns.awaitExactEnd(client, JOB, claim);
        assertThat(claimRun.restored)
                .as("per key, the counts restored from the same checkpoint in CLAIM mode")
                .isEqualTo(noClaimRun.restored);

        // The claimed checkpoint belonged to the finished job, which discards its checkpoints.
        awaitDeleted(retainedMeta.sharedFiles());
    }

    private Path checkpointDir() {
        return tmp.resolve("checkpoints");
    }

    /** A job's completed checkpoints on disk, oldest first: chk-N directories with _metadata. */
    private List<Path> checkpointsOf(JobID jobId) throws IOException {
        try (Stream<Path> dirs = Files.list(checkpointDir().resolve(jobId.toHexString()))) {
            return dirs.filter(d -> d.getFileName().toString().startsWith("chk-"))
                    .filter(d -> Files.exists(d.resolve("_metadata")))
                    .sorted(Comparator.comparingLong(RestoreModeTest::checkpointNumber))
                    .collect(Collectors.toList());
        }
    }

    private static long checkpointNumber(Path chkDir) {
        return Long.parseLong(chkDir.getFileName().toString().substring("chk-".length()));
    }

    /** The first checkpoint the job completed. */
    private SnapshotMetadata firstCheckpointOf(ClusterClient<?> client, JobID jobId)
            throws Exception {
        // Checkpoints complete one at a time, and each is finalized before it is confirmed.
        MiniClusterJobs.awaitWhileRunning(
                client,
                jobId,
                "the first checkpoint after the restore",
                () -> !PerKeyCounter.completedCheckpoints().isEmpty());
        List<Path> checkpoints = checkpointsOf(jobId);
        assertThat(checkpoints).as("completed checkpoints of %s", jobId).isNotEmpty();
        return SnapshotMetadata.load(checkpoints.get(0).toUri().toString());
    }

    private static void awaitDeleted(Set<String> files) throws InterruptedException {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (files.stream().anyMatch(f -> Files.exists(Paths.get(f)))
                && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        assertThat(files)
                .as("segments of the claimed checkpoint after the claiming job finished")
                .noneMatch(f -> Files.exists(Paths.get(f)));
    }
}
