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
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;

import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Runs of the {@link CountingJob} that stop part-way and resume from what they left, with the
 * checks every such run must pass.
 */
final class CountingJobRuns {

    private CountingJobRuns() {}

    /** A stopped run: where its savepoint is and the count of every key in it. */
    static final class Stopped {
        final JobID jobId;
        final String savepoint;
        final Map<Integer, Long> counts;

        Stopped(JobID jobId, String savepoint, Map<Integer, Long> counts) {
            this.jobId = jobId;
            this.savepoint = savepoint;
            this.counts = counts;
        }
    }

    /** A resumed run that went to the end: its job id and the count every key was restored with. */
    static final class Resumed {
        final JobID jobId;
        final Map<Integer, Long> restored;

        Resumed(JobID jobId, Map<Integer, Long> restored) {
            this.jobId = jobId;
            this.restored = restored;
        }
    }

    /**
     * Starts the job from scratch and waits until two checkpoints completed and a third of the
     * records was counted, so that state and input are both part-way.
     */
    static JobID startAndAwaitProgress(
            ClusterClient<?> client, CountingJob job, Configuration config, int parallelism)
            throws Exception {
        EmittedCounts.take();
        PerKeyCounter.reset();
        JobID jobId =
                MiniClusterJobs.submit(
                        client, job.jobGraph(config, parallelism, SavepointRestoreSettings.none()));
        MiniClusterJobs.awaitWhileRunning(
                client,
                jobId,
                "two checkpoints and a third of the records",
                () ->
                        PerKeyCounter.completedCheckpoints().size() >= 2
                                && EmittedCounts.received() >= job.records() / 3);
        return jobId;
    }

    /** Runs the job from scratch and stops it mid-stream with a savepoint of {@code format}. */
    static Stopped stopMidStream(
            ClusterClient<?> client,
            CountingJob job,
            Configuration config,
            int parallelism,
            String savepointDir,
            SavepointFormatType format)
            throws Exception {
        JobID jobId = startAndAwaitProgress(client, job, config, parallelism);
        String savepoint = MiniClusterJobs.stopWithSavepoint(client, jobId, savepointDir, format);
        EmittedCounts beforeStop = EmittedCounts.take();
        assertThat(beforeStop.attempts()).containsExactly(0);
        assertThat(beforeStop.startsPerKey().values()).containsOnly(0L);

        // Stop-with-savepoint processes nothing after the savepoint: what was emitted is the state.
        Map<Integer, Long> counts = new TreeMap<>();
        Map<Integer, Long> emitted = beforeStop.maxPerKey();
        for (int key = 0; key < CountingJob.KEYS; key++) {
            counts.put(key, emitted.getOrDefault(key, 0L));
        }
        assertThat(counts.values().stream().mapToLong(Long::longValue).sum())
                .as("records counted before the savepoint (it must be taken mid-stream)")
                .isBetween(job.records() / 3, job.records() - 2L * CountingJob.KEYS);
        return new Stopped(jobId, savepoint, counts);
    }

    /**
     * Restores the job as {@code restore} says, runs it to the end without failures and checks
     * that every key ends at its exact count.
     */
    static Resumed resumeToEnd(
            ClusterClient<?> client,
            CountingJob job,
            Configuration config,
            int parallelism,
            SavepointRestoreSettings restore)
            throws Exception {
        return resumeToEnd(client, job, config, parallelism, restore, 0);
    }

    /**
     * As {@link #resumeToEnd(ClusterClient, CountingJob, Configuration, int,
     * SavepointRestoreSettings)} from a snapshot whose counts were all raised by {@code raise}
     * (rewritten outside the job): every key ends that much above its exact count.
     */
    static Resumed resumeToEnd(
            ClusterClient<?> client,
            CountingJob job,
            Configuration config,
            int parallelism,
            SavepointRestoreSettings restore,
            long raise)
            throws Exception {
        JobID jobId = submitRestored(client, job, config, parallelism, restore);
        return awaitExactEnd(client, job, jobId, raise);
    }

    /** Submits the job restoring as {@code restore} says; {@link #awaitExactEnd} checks it. */
    static JobID submitRestored(
            ClusterClient<?> client,
            CountingJob job,
            Configuration config,
            int parallelism,
            SavepointRestoreSettings restore)
            throws Exception {
        EmittedCounts.take();
        PerKeyCounter.reset();
        return MiniClusterJobs.submit(client, job.jobGraph(config, parallelism, restore));
    }

    /**
     * Waits for a restored job to finish and checks that it ran without failures and every key
     * ends at its exact count.
     */
    static Resumed awaitExactEnd(ClusterClient<?> client, CountingJob job, JobID jobId)
            throws Exception {
        return awaitExactEnd(client, job, jobId, 0);
    }

    private static Resumed awaitExactEnd(
            ClusterClient<?> client, CountingJob job, JobID jobId, long raise) throws Exception {
        MiniClusterJobs.awaitSuccess(client, jobId);
        EmittedCounts resumed = EmittedCounts.take();

        assertThat(resumed.attempts()).as("attempts of the resumed job").containsExactly(0);
        Map<Integer, Long> restored = resumed.startsPerKey();
        assertThat(restored.keySet())
                .as("keys counted after the restore (all have records left)")
                .hasSize(CountingJob.KEYS);
        Map<Integer, Long> expected = new TreeMap<>();
        job.expectedCounts().forEach((key, count) -> expected.put(key, count + raise));
        assertThat(resumed.maxPerKey())
                .as("final count per key of the resumed job")
                .isEqualTo(expected);
        return new Resumed(jobId, restored);
    }
}
