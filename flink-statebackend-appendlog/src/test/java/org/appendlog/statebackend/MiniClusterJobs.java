package org.appendlog.statebackend;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;

import java.time.Duration;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;

/** Submitting, stopping and awaiting jobs on the test's mini cluster. */
final class MiniClusterJobs {

    /** Generous: the test machine is small and shared. */
    static final Duration TIMEOUT = Duration.ofMinutes(3);

    private MiniClusterJobs() {}

    static JobID submit(ClusterClient<?> client, JobGraph jobGraph) throws Exception {
        return client.submitJob(jobGraph).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
    }

    /** Waits for the job to finish and rethrows its failure, if it had one. */
    static void awaitSuccess(ClusterClient<?> client, JobID jobId) throws Exception {
        JobResult result =
                client.requestJobResult(jobId).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        // Throws the job's failure cause, naming what went wrong in the job.
        result.toJobExecutionResult(MiniClusterJobs.class.getClassLoader());
        if (!result.isSuccess()) {
            throw new AssertionError("Job " + jobId + " ended " + result.getApplicationStatus());
        }
    }

    /** Waits until {@code condition} holds while the job is still running. */
    static void awaitWhileRunning(
            ClusterClient<?> client, JobID jobId, String what, BooleanSupplier condition)
            throws Exception {
        long deadline = System.nanoTime() + TIMEOUT.toNanos();
        while (!condition.getAsBoolean()) {
            JobStatus status = client.getJobStatus(jobId).get();
            if (status.isGloballyTerminalState()) {
                awaitSuccess(client, jobId);
                throw new AssertionError(
                        "Job " + jobId + " ended " + status + " before " + what);
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("Timed out waiting for " + what);
            }
            Thread.sleep(20);
        }
    }

    static String stopWithSavepoint(
            ClusterClient<?> client, JobID jobId, String savepointDir, SavepointFormatType format)
            throws Exception {
        String path =
                client.stopWithSavepoint(jobId, false, savepointDir, format)
                        .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        client.requestJobResult(jobId).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        return path;
    }
}
