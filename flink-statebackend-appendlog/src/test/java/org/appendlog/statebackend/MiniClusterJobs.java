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
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.test.junit5.MiniClusterExtension;

import javax.annotation.Nullable;

import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;

/** The tests' mini cluster, and submitting, stopping and awaiting jobs on it. */
final class MiniClusterJobs {

    /** Generous: the test machine is small and shared. */
    static final Duration TIMEOUT = Duration.ofMinutes(3);

    private MiniClusterJobs() {}

    /** The tests' mini cluster: one task manager with four slots. */
    static MiniClusterExtension cluster() {
        return cluster(Configuration::new);
    }

    /** The tests' mini cluster with the cluster configuration {@code config} gives. */
    static MiniClusterExtension cluster(Supplier<Configuration> config) {
        return new MiniClusterExtension(
                () ->
                        new MiniClusterResourceConfiguration.Builder()
                                .setConfiguration(config.get())
                                .setNumberTaskManagers(1)
                                .setNumberSlotsPerTaskManager(4)
                                .build());
    }

    /**
     * The sum of the job's {@code appendlog.<name>} gauges or counters that {@code metrics} kept, of all its
     * tasks or, with {@code attempt}, only of that attempt's.
     */
    static long appendLogMetric(
            InMemoryReporter metrics, JobID jobId, String name, @Nullable Integer attempt) {
        long sum = 0;
        for (Map.Entry<MetricGroup, Map<String, Metric>> group :
                metrics.getMetricsByGroup().entrySet()) {
            Map<String, String> variables = group.getKey().getAllVariables();
            Metric metric = group.getValue().get(name);
            if (metric != null
                    && jobId.toString().equals(variables.get("<job_id>"))
                    && (attempt == null
                            || attempt.toString().equals(variables.get("<task_attempt_num>")))) {
                sum +=
                        metric instanceof Counter
                                ? ((Counter) metric).getCount()
                                : ((Number) ((Gauge<?>) metric).getValue()).longValue();
            }
        }
        return sum;
    }

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

    /**
     * Takes a savepoint of {@code format} of the running job, and tries again if one fails: a
     * source that finishes while the savepoint is triggered fails that savepoint ("checkpoint
     * request for unknown task"), not the job, as it would fail a stop-with-savepoint.
     */
    static String savepoint(
            ClusterClient<?> client, JobID jobId, String savepointDir, SavepointFormatType format)
            throws Exception {
        for (int attempt = 1; ; attempt++) {
            try {
                return client.triggerSavepoint(jobId, savepointDir, format)
                        .get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
            } catch (ExecutionException e) {
                if (attempt == 3 || client.getJobStatus(jobId).get() != JobStatus.RUNNING) {
                    throw e;
                }
            }
        }
    }

    /** Cancels the job and waits until it ended. */
    static void cancel(ClusterClient<?> client, JobID jobId) throws Exception {
        client.cancel(jobId).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        client.requestJobResult(jobId).get(TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
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
