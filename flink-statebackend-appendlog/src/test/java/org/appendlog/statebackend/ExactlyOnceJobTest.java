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

import org.appendlog.testing.CheckpointHistory;
import org.appendlog.testing.SlowDown;

import org.apache.flink.api.common.JobID;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.time.Duration;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.appendlog.statebackend.metrics.AppendLogMetrics.COMPACTIONS_RUN;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.COMPACTION_BYTES_WRITTEN;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.RESTORE_BYTES_READ;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.RESTORE_LOCAL_SEGMENTS;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job counting per key on the append-log backend, selected through the cluster configuration
 * as flink-conf.yaml would, with local recovery on, fails once mid-stream and still ends with
 * exact counts; also with Flink's changelog backend wrapping it, with checkpoint file merging, and
 * with unaligned checkpoints under backpressure, where the restored checkpoint also holds records
 * in flight (Flink's REST API shows the checkpoints unaligned, with persisted in-flight bytes).
 *
 * <p>Every run also splits the records its restored checkpoint covered: the restored keyed state
 * holds those the restarted counting tasks did not count, and the records they counted beyond
 * what the restored sources emitted came from the checkpoint's channel state (none for aligned
 * checkpoints). Once the job ended, none of its files is left.
 */
class ExactlyOnceJobTest {

    private static final int PARALLELISM = 2;
    private static final CountingJob JOB = new CountingJob(50_000, 10_000);

    /**
     * A job whose counting tasks fall behind its source: each of them sleeps 1 ms every 2 records
     * (under 2 000 records a second), while the source offers 5 000 a second. The records in
     * between wait in the network, more with every second, but the source keeps its own pace, so
     * that it is still emitting when the failure, which waits for a checkpoint, comes.
     */
    private static final CountingJob BACKPRESSURED_JOB =
            new CountingJob(12_000, 5_000).slowedDownBy(new SlowDown<>(2, 1));

    @TempDir static Path tmp;

    /** Keeps the metrics of tasks that ended: those of the failed attempt and of the restore. */
    private static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            MiniClusterJobs.cluster(ExactlyOnceJobTest::clusterConfig);

    /**
     * The cluster's configuration selects the backend, as flink-conf.yaml would, and where
     * Flink's changelog, if a job enables it, is stored. Local recovery is on (a task manager
     * option): a restart restores each task's local copy of the checkpoint where it has one.
     */
    private static Configuration clusterConfig() {
        Configuration config =
                CountingJob.withAppendLog(new Configuration(), logDir().toUri().toString());
        config.set(StateRecoveryOptions.LOCAL_RECOVERY, true);
        config.set(CheckpointingOptions.LOCAL_BACKUP_ENABLED, true);
        CountingJob.withChangelogStorage(config, changelogDir().toUri().toString());
        // The REST API keeps the statistics of this many checkpoints per job (10 by default).
        config.set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 1_000);
        return METRICS.addToConfiguration(config);
    }

    private static Path changelogDir() {
        return tmp.resolve("changelog");
    }

    private static Path logDir() {
        return tmp.resolve("log");
    }

    @Test
    void countsAreExactAfterAFailureMidStream(@InjectClusterClient RestClusterClient<?> client)
            throws Exception {
        JobID jobId = countsAreExactAfterAFailure(client, jobConfig("plain")).jobId;
        // The restarted tasks run in the same TaskManager: each reads its checkpoint's copy.
        assertThat(MiniClusterJobs.appendLogMetric(METRICS, jobId, RESTORE_LOCAL_SEGMENTS, 1))
                .as("segments the restarted backends read from task-local copies")
                .isPositive();
    }

    /**
     * A user may enable Flink's changelog backend over any backend: it logs every state change
     * to its own store and materializes the state now and then through this backend's snapshots,
     * which a restore reads back before replaying the changelog.
     */
    @Test
    void countsAreExactAfterAFailureUnderFlinksChangelogBackend(
            @InjectClusterClient RestClusterClient<?> client) throws Exception {
        Configuration jobConfig = CountingJob.withChangelog(jobConfig("changelog"));
        JobID jobId = countsAreExactAfterAFailure(client, jobConfig).jobId;
        assertThat(changelogDir().resolve(jobId.toString()))
                .as("Flink's changelog of the job")
                .isDirectory();
    }

    /**
     * Flink 1.20's checkpoint file merging hands the backend streams into files shared by many
     * checkpoints and subtasks; this backend writes its manifests through them.
     */
    @Test
    void countsAreExactAfterAFailureWithCheckpointFileMerging(
            @InjectClusterClient RestClusterClient<?> client) throws Exception {
        Configuration jobConfig = jobConfig("merging");
        jobConfig.set(CheckpointingOptions.FILE_MERGING_ENABLED, true);
        Run run = countsAreExactAfterAFailure(client, jobConfig);
        assertThat(run.filesSeen)
                .as("files of the job seen while it ran")
                .anyMatch(f -> f.contains("merging-checkpoints/" + run.jobId + "/taskowned/"));
    }

    /**
     * Unaligned checkpoints, from the start of every checkpoint (no aligned phase), under
     * backpressure: the barriers overtake the records waiting in the network between the sources
     * and the slowed counting tasks, and the checkpoint persists those records as channel state,
     * which the restore replays into the restored counts.
     */
    @Test
    void countsAreExactAfterAFailureWithUnalignedCheckpoints(
            @InjectClusterClient RestClusterClient<?> client) throws Exception {
        Configuration jobConfig = jobConfig("unaligned");
        jobConfig.set(CheckpointingOptions.ENABLE_UNALIGNED, true);
        jobConfig.set(CheckpointingOptions.ALIGNED_CHECKPOINT_TIMEOUT, Duration.ZERO);
        Run run = countsAreExactAfterAFailure(client, BACKPRESSURED_JOB, jobConfig);
        assertThat(run.restoredInState)
                .as("records the restored keyed state covered")
                .isPositive();

        CheckpointHistory checkpoints = CheckpointHistory.of(client, run.jobId);
        System.out.printf(
                "unaligned: restored %s covering %d records in keyed state, %d in flight; %s%n",
                checkpoints.restored(),
                run.restoredInState,
                run.restoredInFlight,
                checkpoints.summary());
        checkpoints.assertRestoredUnalignedWithInFlightData();
    }

    /**
     * Compaction after nearly every checkpoint: 1 KB segments (every batch closes one), a dirty
     * ratio of 0.2, a checkpoint every 20 ms. Runs are taken up, replace the segments they
     * compacted and are referred to by the checkpoints after, through the failure and the
     * restore; every count is exact. With one checkpoint at a time, no checkpoint fails but those
     * the failure and the job's end cut short. With three at once, pending checkpoints list
     * different logs (barriers ahead of completions, runs taken up by one of them), and the counts
     * must be exact all the same; some checkpoints fail there, as the module README describes
     * (the JobManager refuses their acknowledgements), so their number is printed, not bounded.
     */
    @ParameterizedTest(name = "max-concurrent-checkpoints {0}")
    @ValueSource(ints = {1, 3})
    void countsAreExactAfterAFailureWithCompactionAfterNearlyEveryCheckpoint(
            int maxConcurrent, @InjectClusterClient RestClusterClient<?> client) throws Exception {
        Configuration jobConfig =
                CountingJob.withAppendLog(
                        jobConfig("compacting-" + maxConcurrent), logDir().toUri().toString());
        jobConfig.setString(AppendLogOptions.SEGMENT_SIZE.key(), "1kb");
        jobConfig.set(AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO, 0.2);
        jobConfig.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(20));
        jobConfig.set(CheckpointingOptions.MAX_CONCURRENT_CHECKPOINTS, maxConcurrent);
        Run run = countsAreExactAfterAFailure(client, jobConfig);

        long passes =
                MiniClusterJobs.appendLogMetric(METRICS, run.jobId, COMPACTIONS_RUN, null);
        long written =
                MiniClusterJobs.appendLogMetric(METRICS, run.jobId, COMPACTION_BYTES_WRITTEN, null);
        CheckpointHistory checkpoints = CheckpointHistory.of(client, run.jobId);
        System.out.printf(
                "compacting, max-concurrent %d: %d passes wrote %d bytes; %d checkpoints completed,"
                        + " %d failed%n",
                maxConcurrent,
                passes,
                written,
                checkpoints.completed().size(),
                checkpoints.failed().size());
        assertThat(passes).as("compaction passes").isGreaterThan(20);
        assertThat(written).as("bytes compaction wrote into runs").isPositive();
        assertThat(checkpoints.completed().size()).isGreaterThan(50);
        if (maxConcurrent == 1) {
            assertThat(checkpoints.failed().size())
                    .as("failed checkpoints (those the failure and the job's end cut short): %s",
                            checkpoints.failed())
                    .isLessThanOrEqualTo(5);
        }
    }

    /**
     * A finished run: the job, the files (relative to {@link #tmp}) seen while it ran, and the
     * records its restored checkpoint covered, in keyed state and in flight.
     */
    private static final class Run {
        final JobID jobId;
        final Set<String> filesSeen;
        final long restoredInState;
        final long restoredInFlight;

        Run(JobID jobId, Set<String> filesSeen, long restoredInState, long restoredInFlight) {
            this.jobId = jobId;
            this.filesSeen = filesSeen;
            this.restoredInState = restoredInState;
            this.restoredInFlight = restoredInFlight;
        }
    }

    private static Configuration jobConfig(String run) {
        return CountingJob.withRestarts(
                CountingJob.jobConfig(tmp.resolve(run + "-checkpoints").toUri().toString()));
    }

    private static Run countsAreExactAfterAFailure(
            RestClusterClient<?> client, Configuration jobConfig) throws Exception {
        return countsAreExactAfterAFailure(client, JOB, jobConfig);
    }

    private static Run countsAreExactAfterAFailure(
            RestClusterClient<?> client, CountingJob job, Configuration jobConfig)
            throws Exception {
        FailOnce.reset();
        EmittedCounts.take();
        long perSubtask = job.records() / PARALLELISM;
        JobID jobId =
                MiniClusterJobs.submit(
                        client,
                        job.failingWith(new FailOnce(perSubtask / 4, perSubtask / 10))
                                .jobGraph(jobConfig, PARALLELISM, SavepointRestoreSettings.none()));
        Set<String> filesSeen = new TreeSet<>();
        long deadline = System.nanoTime() + MiniClusterJobs.TIMEOUT.toNanos();
        while (!client.getJobStatus(jobId).get().isGloballyTerminalState()) {
            assertThat(System.nanoTime() - deadline).as("waiting past the timeout").isNegative();
            filesSeen.addAll(jobFiles(jobId));
            Thread.sleep(50);
        }
        MiniClusterJobs.awaitSuccess(client, jobId);
        EmittedCounts emitted = EmittedCounts.take();
        assertNoFilesLeftOf(client, jobId);

        assertThat(filesSeen)
                .as("the append-log backend selected by configuration wrote log segments")
                .anyMatch(f -> f.startsWith("log/" + jobId + "/") && f.endsWith(".seg"));
        assertThat(FailOnce.hasFailed()).as("the injected failure happened").isTrue();
        assertThat(emitted.attempts())
                .as("one failure, one restart, and the restore itself did not fail")
                .containsExactly(0, 1);

        Map<Integer, Long> fromScratch = emitted.ofAttempt(0).startsPerKey();
        assertThat(fromScratch.values()).as("the first attempt started empty").containsOnly(0L);

        Map<Integer, Long> restored = emitted.ofAttempt(1).startsPerKey();
        Map<Integer, Long> beforeFailure = emitted.ofAttempt(0).maxPerKey();
        restored.forEach(
                (key, count) ->
                        assertThat(count)
                                .as("restored count of key %d", key)
                                .isLessThanOrEqualTo(beforeFailure.get(key)));
        assertThat(emitted.maxPerKey())
                .as("final count of every key")
                .isEqualTo(job.expectedCounts());

        // Every record was counted once: the restarted counting tasks counted what the restored
        // sources emitted after the checkpoint and what the checkpoint held in flight between
        // them, if anything; the restored keyed state holds the rest.
        long countedAfterRestore = emitted.ofAttempt(1).size();
        long inFlight = countedAfterRestore - FailOnce.passed(1);
        long inState = job.records() - countedAfterRestore;
        assertThat(inState + inFlight)
                .as("records covered by the restored checkpoint (at least the failing subtask's"
                        + " %d before the checkpoint the failure waited for)", perSubtask / 4)
                .isGreaterThanOrEqualTo(perSubtask / 4);
        if (jobConfig.get(CheckpointingOptions.ENABLE_UNALIGNED)) {
            assertThat(inFlight)
                    .as("records the restored checkpoint held in flight (the restarted counting"
                            + " tasks counted %d, the restored sources emitted %d)",
                            countedAfterRestore, FailOnce.passed(1))
                    .isPositive();
        } else {
            assertThat(inFlight)
                    .as("records restored in flight by an aligned checkpoint (the restarted"
                            + " counting tasks counted %d, the restored sources emitted %d)",
                            countedAfterRestore, FailOnce.passed(1))
                    .isZero();
        }
        assertThat(MiniClusterJobs.appendLogMetric(METRICS, jobId, RESTORE_BYTES_READ, 1))
                .as("log bytes the restarted backends read (the appendlog.restoreBytesRead metric)")
                .isPositive();
        return new Run(jobId, filesSeen, inState, inFlight);
    }

    /**
     * A finished job's checkpoints are not retained, so Flink deletes every one of them with the
     * log segments they refer to, on its I/O threads after the job ended; nothing else may stay:
     * no segment of a checkpoint that failed or was refused, no run that was never taken up.
     * Flink makes one exception: a checkpoint still in flight as the job ends may have its
     * acknowledgement dropped, state and all ({@code CheckpointCoordinator} ignores messages once
     * it shut down), so a file written after the last completed checkpoint was triggered may stay.
     */
    private static void assertNoFilesLeftOf(RestClusterClient<?> client, JobID jobId)
            throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        Set<String> left = jobFiles(jobId);
        while (!left.isEmpty() && System.nanoTime() < deadline) {
            Thread.sleep(100);
            left = jobFiles(jobId);
        }
        if (left.isEmpty()) {
            return;
        }
        CheckpointHistory.Checkpoint lastCompleted =
                CheckpointHistory.of(client, jobId).completed().get(0);
        Set<String> writtenBefore = new TreeSet<>();
        for (String file : left) {
            if (Files.getLastModifiedTime(tmp.resolve(file)).toMillis()
                    < lastCompleted.triggerTimestamp) {
                writtenBefore.add(file);
            }
        }
        assertThat(writtenBefore)
                .as("files of the finished job left behind, written before its last completed"
                        + " checkpoint (%s) was triggered", lastCompleted)
                .isEmpty();
        System.out.printf(
                "left behind by checkpoints in flight as job %s ended: %s%n", jobId, left);
    }

    /**
     * The files under the test's directory whose path names the job, relative to that directory,
     * now; the backend and Flink may delete some meanwhile.
     */
    private static Set<String> jobFiles(JobID jobId) throws IOException {
        Set<String> names = new TreeSet<>();
        try (Stream<Path> files = Files.walk(tmp)) {
            files.filter(Files::isRegularFile)
                    .map(f -> tmp.relativize(f).toString())
                    .filter(f -> f.contains(jobId.toString()))
                    .forEach(names::add);
        } catch (NoSuchFileException | UncheckedIOException deletedWhileListing) {
            // seen again at the next poll
        }
        return names;
    }
}
