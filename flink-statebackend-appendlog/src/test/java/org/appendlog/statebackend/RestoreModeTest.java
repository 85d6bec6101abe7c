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

import org.apache.flink.api.common.JobID;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.RestoreMode;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
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
 * A retained (externalized) appendlog checkpoint restores in NO_CLAIM, CLAIM and LEGACY mode with
 * exact counts, also rescaled (taken at parallelism 2, restored at 1 and at 3). NO_CLAIM: the first
 * checkpoint after the restore refers to no file of the restored checkpoint, and the restored
 * checkpoint stays intact. CLAIM: the job takes the checkpoint over, builds its next checkpoint on
 * the claimed segments and, once finished, frees them. LEGACY: the job builds on the segments, and
 * Flink keeps them all.
 */
class RestoreModeTest {

    private static final int PARALLELISM = 2;
    private static final CountingJob JOB = new CountingJob(20_000, 4_000);

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            MiniClusterJobs.cluster(RestoreModeTest::clusterConfig);

    @TempDir Path tmp;

    /**
     * Nothing is inlined into {@code _metadata}, so that every piece of state of this small job is
     * a file, as it is for state of realistic size. (Flink configures the checkpoint storage that
     * the job's checkpoint directory defines with the cluster's configuration only.)
     */
    private static Configuration clusterConfig() {
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.FS_SMALL_FILE_THRESHOLD, MemorySize.ZERO);
        return config;
    }

    @Test
    void retainedCheckpointRestoresInNoClaimThenInClaimMode(
            @InjectClusterClient ClusterClient<?> client) throws Exception {
        Retained retained = retainCheckpoint(client);
        SnapshotMetadata retainedMeta = retained.metadata;
        Set<String> retainedFiles = retained.files;
        Map<Integer, Long> emittedBeforeCancel = retained.emittedBeforeCancel;
        Configuration restoredConfig = retained.restoredConfig;

        // NO_CLAIM, at parallelism 1
        JobID noClaim =
                CountingJobRuns.submitRestored(
                        client,
                        JOB,
                        restoredConfig,
                        1,
                        SavepointRestoreSettings.forPath(
                                retained.pointer, false, RestoreMode.NO_CLAIM));
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

        // CLAIM, at parallelism 3 (subtasks share claimed segments), from the same checkpoint,
        // which NO_CLAIM left intact
        JobID claim =
                CountingJobRuns.submitRestored(
                        client,
                        JOB,
                        restoredConfig,
                        3,
                        SavepointRestoreSettings.forPath(
                                retained.pointer, false, RestoreMode.CLAIM));
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

    /**
     * LEGACY mode (deprecated, still Flink 1.20's third mode): the job builds on the restored
     * checkpoint's segments without owning them, so Flink keeps all of them; the checkpoint
     * restores again afterwards with the same counts.
     */
    @Test
    void retainedCheckpointRestoresInLegacyModeAndStaysIntact(
            @InjectClusterClient ClusterClient<?> client) throws Exception {
        Retained retained = retainCheckpoint(client);
        JobID legacy =
                CountingJobRuns.submitRestored(
                        client,
                        JOB,
                        retained.restoredConfig,
                        3,
                        SavepointRestoreSettings.forPath(
                                retained.pointer, false, RestoreMode.LEGACY));
        SnapshotMetadata afterLegacy = firstCheckpointOf(client, legacy);
        assertThat(afterLegacy.sharedFiles())
                .as("the first checkpoint after the LEGACY restore, %s, builds on the restored"
                        + " segments", afterLegacy)
                .containsAnyElementsOf(retained.metadata.sharedFiles());
        CountingJobRuns.Resumed legacyRun = CountingJobRuns.awaitExactEnd(client, JOB, legacy);
        assertThat(retained.files)
                .as("files of the retained checkpoint after the LEGACY job finished")
                .allMatch(f -> Files.exists(Paths.get(f)));

        CountingJobRuns.Resumed again =
                CountingJobRuns.resumeToEnd(
                        client,
                        JOB,
                        retained.restoredConfig,
                        PARALLELISM,
                        SavepointRestoreSettings.forPath(
                                retained.pointer, false, RestoreMode.NO_CLAIM));
        assertThat(again.restored)
                .as("per key, the counts restored from the same checkpoint after the LEGACY run")
                .isEqualTo(legacyRun.restored);
    }

    /**
     * A native savepoint is relocatable, as Flink documents savepoints to be: moved to another
     * directory, it restores with exact counts (its files are found relative to its metadata).
     */
    @Test
    void nativeSavepointRestoresAfterItsDirectoryMoved(
            @InjectClusterClient ClusterClient<?> client) throws Exception {
        Configuration config = retainingConfig();
        CountingJobRuns.Stopped stopped = stopWithNativeSavepoint(client, config);
        Path moved = tmp.resolve("moved-savepoint");
        Files.move(Paths.get(URI.create(stopped.savepoint)), moved);

        CountingJobRuns.Resumed resumed =
                CountingJobRuns.resumeToEnd(
                        client,
                        JOB,
                        config,
                        3,
                        SavepointRestoreSettings.forPath(
                                moved.toUri().toString(), false, RestoreMode.NO_CLAIM));
        assertThat(resumed.restored)
                .as("per key, the count restored from the moved savepoint")
                .isEqualTo(stopped.counts);
    }

    /** A retained checkpoint of a cancelled run, and what a test needs to restore it. */
    private static final class Retained {
        final String pointer;
        final SnapshotMetadata metadata;
        /** Its segments and private files. */
        final Set<String> files;
        final Map<Integer, Long> emittedBeforeCancel;
        /** The job's configuration, keeping every checkpoint until the job ends. */
        final Configuration restoredConfig;

        Retained(
                String pointer,
                SnapshotMetadata metadata,
                Set<String> files,
                Map<Integer, Long> emittedBeforeCancel,
                Configuration restoredConfig) {
            this.pointer = pointer;
            this.metadata = metadata;
            this.files = files;
            this.emittedBeforeCancel = emittedBeforeCancel;
            this.restoredConfig = restoredConfig;
        }
    }

    /** Runs the job at parallelism 2 part-way, cancels it and returns its retained checkpoint. */
    private Retained retainCheckpoint(ClusterClient<?> client) throws Exception {
        Configuration config = retainingConfig();
        JobID first = CountingJobRuns.startAndAwaitProgress(client, JOB, config, PARALLELISM);
        String retained = cancelAndFindRetainedCheckpoint(client, first).toUri().toString();
        Map<Integer, Long> emittedBeforeCancel = EmittedCounts.take().maxPerKey();
        SnapshotMetadata metadata = SnapshotMetadata.load(retained);
        assertThat(metadata.keyedStateHandles())
                .as("keyed state of the retained checkpoint %s", retained)
                .isNotEmpty()
                .allMatch(IncrementalRemoteKeyedStateHandle.class::isInstance);
        assertThat(metadata.sharedFiles()).as("segments of %s", retained).isNotEmpty();
        Set<String> files = new TreeSet<>(metadata.sharedFiles());
        files.addAll(metadata.privateFiles());
        // The restored jobs keep every checkpoint until they end, so the first one can be read.
        Configuration restoredConfig = new Configuration(config);
        restoredConfig.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 100);
        return new Retained(retained, metadata, files, emittedBeforeCancel, restoredConfig);
    }

    /**
     * A native savepoint restored in CLAIM mode belongs to the job: the first checkpoint that
     * subsumes it deletes its files. The job's later checkpoints must therefore not refer to them,
     * and must restore.
     */
    @Test
    void checkpointsAfterClaimingANativeSavepointOutliveIt(
            @InjectClusterClient ClusterClient<?> client) throws Exception {
        Configuration config = retainingConfig();
        // Compaction would move the savepoint's records into the job's own log at some point; the
        // checkpoints before that point must not depend on the savepoint either.
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        CountingJobRuns.Stopped stopped = stopWithNativeSavepoint(client, config);
        Set<String> savepointFiles = SnapshotMetadata.load(stopped.savepoint).privateFiles();

        JobID claiming =
                CountingJobRuns.submitRestored(
                        client,
                        JOB,
                        config,
                        PARALLELISM,
                        SavepointRestoreSettings.forPath(
                                stopped.savepoint, false, RestoreMode.CLAIM));
        MiniClusterJobs.awaitWhileRunning(
                client,
                claiming,
                "Flink to discard the claimed, subsumed savepoint",
                () -> savepointFiles.stream().noneMatch(f -> Files.exists(Paths.get(f))));
        int completed = PerKeyCounter.completedCheckpoints().size();
        MiniClusterJobs.awaitWhileRunning(
                client,
                claiming,
                "a checkpoint after the savepoint was discarded",
                () -> PerKeyCounter.completedCheckpoints().size() > completed);
        Path retained = cancelAndFindRetainedCheckpoint(client, claiming);
        Map<Integer, Long> emittedBeforeCancel = EmittedCounts.take().maxPerKey();

        CountingJobRuns.Resumed resumed =
                CountingJobRuns.resumeToEnd(
                        client,
                        JOB,
                        config,
                        PARALLELISM,
                        SavepointRestoreSettings.forPath(
                                retained.toUri().toString(), false, RestoreMode.NO_CLAIM));
        // A key that received no record before the cancel restores the savepoint's count.
        resumed.restored.forEach(
                (key, count) ->
                        assertThat(count)
                                .as("restored count of key %d", key)
                                .isBetween(
                                        stopped.counts.get(key),
                                        emittedBeforeCancel.getOrDefault(
                                                key, stopped.counts.get(key))));
        assertThat(SnapshotMetadata.load(retained.toUri().toString()).sharedFiles())
                .as("segments of %s, taken after the claimed savepoint was discarded", retained)
                .doesNotContainAnyElementsOf(savepointFiles);
    }

    /**
     * Runs the job at parallelism 2 and stops it mid-stream with a native savepoint, whose state
     * is files (nothing is inlined on this cluster).
     */
    private CountingJobRuns.Stopped stopWithNativeSavepoint(
            ClusterClient<?> client, Configuration config) throws Exception {
        CountingJobRuns.Stopped stopped =
                CountingJobRuns.stopMidStream(
                        client,
                        JOB,
                        config,
                        PARALLELISM,
                        tmp.resolve("savepoints").toUri().toString(),
                        SavepointFormatType.NATIVE);
        assertThat(SnapshotMetadata.load(stopped.savepoint).privateFiles())
                .as("files of the native savepoint")
                .isNotEmpty();
        return stopped;
    }

    /** Checkpoints every 200 ms on appendlog, retained when the job is cancelled. */
    private Configuration retainingConfig() {
        Configuration config = CountingJob.appendLogConfig(tmp);
        config.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        return config;
    }

    /** Cancels the job and returns its latest retained checkpoint, found on disk. */
    private Path cancelAndFindRetainedCheckpoint(ClusterClient<?> client, JobID jobId)
            throws Exception {
        MiniClusterJobs.cancel(client, jobId);
        List<Path> retained = checkpointsOf(jobId);
        assertThat(retained).as("retained checkpoints of %s", jobId).isNotEmpty();
        return retained.get(retained.size() - 1);
    }

    /**
     * Finished jobs discard their checkpoints asynchronously on the shared cluster; the temporary
     * directory is deleted only once the files stop changing, or its deletion races with them.
     */
    @AfterEach
    void awaitDiscardsSettled() throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
        long previous = -1;
        int stableFor = 0;
        while (stableFor < 5 && System.nanoTime() < deadline) {
            long files;
            try (Stream<Path> all = Files.walk(tmp)) {
                files = all.count();
            } catch (IOException | java.io.UncheckedIOException e) {
                files = -1; // a file vanished while walking: still changing
            }
            stableFor = files >= 0 && files == previous ? stableFor + 1 : 0;
            previous = files;
            Thread.sleep(200);
        }
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
