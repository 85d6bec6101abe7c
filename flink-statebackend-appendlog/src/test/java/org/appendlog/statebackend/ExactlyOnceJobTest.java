package org.appendlog.statebackend;

import org.apache.flink.api.common.JobID;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.NoSuchFileException;
import java.nio.file.Path;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job counting per key on the append-log backend, selected through the cluster configuration
 * as flink-conf.yaml would, with local recovery on, fails once mid-stream and still ends with
 * exact counts; also with Flink's changelog backend wrapping it, and with checkpoint file merging.
 */
class ExactlyOnceJobTest {

    private static final int PARALLELISM = 2;
    private static final CountingJob JOB = new CountingJob(50_000, 10_000);

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
        return METRICS.addToConfiguration(config);
    }

    private static Path changelogDir() {
        return tmp.resolve("changelog");
    }

    private static Path logDir() {
        return tmp.resolve("log");
    }

    @Test
    void countsAreExactAfterAFailureMidStream(@InjectClusterClient ClusterClient<?> client)
            throws Exception {
        countsAreExactAfterAFailure(client, jobConfig("plain"));
    }

    /**
     * A user may enable Flink's changelog backend over any backend: it logs every state change
     * to its own store and materializes the state now and then through this backend's snapshots,
     * which a restore reads back before replaying the changelog.
     */
    @Test
    void countsAreExactAfterAFailureUnderFlinksChangelogBackend(
            @InjectClusterClient ClusterClient<?> client) throws Exception {
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
            @InjectClusterClient ClusterClient<?> client) throws Exception {
        Configuration jobConfig = jobConfig("merging");
        jobConfig.set(CheckpointingOptions.FILE_MERGING_ENABLED, true);
        Run run = countsAreExactAfterAFailure(client, jobConfig);
        assertThat(run.filesSeen)
                .as("files of the job seen while it ran")
                .anyMatch(f -> f.contains("merging-checkpoints/" + run.jobId + "/taskowned/"));
    }

    /** A finished run: the job and the files (relative to {@link #tmp}) seen while it ran. */
    private static final class Run {
        final JobID jobId;
        final Set<String> filesSeen;

        Run(JobID jobId, Set<String> filesSeen) {
            this.jobId = jobId;
            this.filesSeen = filesSeen;
        }
    }

    private static Configuration jobConfig(String run) {
        return CountingJob.withRestarts(
                CountingJob.jobConfig(tmp.resolve(run + "-checkpoints").toUri().toString()));
    }

    private static Run countsAreExactAfterAFailure(
            ClusterClient<?> client, Configuration jobConfig) throws Exception {
        FailOnce.reset();
        EmittedCounts.take();
        long perSubtask = JOB.records() / PARALLELISM;
        JobID jobId =
                MiniClusterJobs.submit(
                        client,
                        JOB.failingWith(new FailOnce(perSubtask / 4, perSubtask / 10))
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
        assertThat(restored.values().stream().mapToLong(Long::longValue).sum())
                .as("records covered by the restored checkpoint (at least the failing subtask's"
                        + " %d before the checkpoint the failure waited for)", perSubtask / 4)
                .isGreaterThanOrEqualTo(perSubtask / 4);

        assertThat(emitted.maxPerKey())
                .as("final count of every key")
                .isEqualTo(JOB.expectedCounts());
        assertThat(MiniClusterJobs.appendLogMetric(METRICS, jobId, "restoreBytesRead", 1))
                .as("log bytes the restarted backends read (the appendlog.restoreBytesRead metric)")
                .isPositive();
        return new Run(jobId, filesSeen);
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
