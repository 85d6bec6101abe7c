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

package org.appendlog.bench.harness;

import org.appendlog.bench.jobs.BenchJob;
import org.appendlog.bench.jobs.Verification;
import org.appendlog.bench.memory.LiveHeap;
import org.appendlog.bench.run.RunChannel;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.executiongraph.ArchivedExecutionGraph;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.io.File;
import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * Runs one configuration on its own Flink MiniCluster in this JVM and measures it:
 *
 * <ol>
 *   <li>the job runs unthrottled (or at the given rate) through the generator's first pass (every
 *       key written once), then for the measured run; throughput is the processed-record rate over
 *       its second half, checkpoint figures cover the checkpoints that began and ended within it;
 *   <li>the live heap (after a full GC) and the bytes on the storage are taken; then one source
 *       instance throws; recovery is timed
 *       from that moment to the first record the restarted job processes, and to the start of the
 *       first half second (not before that first record) in which it processes at 90% of the
 *       measured throughput again;
 *   <li>the sources are stopped, the job finishes, and its result is verified against the
 *       generator; checkpoint figures come from Flink's checkpoint statistics, written bytes from
 *       {@link StorageScanner}; the run's heap is the live heap taken before the failure minus the
 *       live heap when the job had processed its first records (same cluster, empty state).
 * </ol>
 */
public final class ConfigurationRun {

    private static final long SAMPLE_MILLIS = 100;
    private static final long RATE_WINDOW_NANOS = 500_000_000L;
    private static final double FULL_THROUGHPUT = 0.9;

    private final Profile profile;
    private final Storages storages;
    private final File workDir;
    private final ProgressLine progress;
    private int runs;

    public ConfigurationRun(Profile profile, Storages storages, File workDir, ProgressLine progress) {
        this.profile = profile;
        this.storages = storages;
        this.workDir = workDir;
        this.progress = progress;
    }

    /**
     * Runs {@code job} on {@code backend} over {@code storage}; a null backend runs it with
     * checkpointing off. {@code round} is recorded in the result (0 for a warm-up).
     */
    public RunResult run(BenchJob job, Backend backend, String storage, int round, String position) {
        RunResult result =
                new RunResult(
                        job.name(),
                        backend == null ? RunResult.CHECKPOINTING_OFF : backend.id,
                        backend == null ? "-" : storage,
                        round);
        long start = System.nanoTime();
        String unavailable = backend == null ? null : backend.unavailableReason();
        if (unavailable != null) {
            result.status = "unavailable: " + unavailable;
            progress.done(position + " " + result.label() + ": " + result.status);
            return result;
        }
        String runName = String.format(Locale.ROOT, "%02d-%s-%s-%s", ++runs, job.name(), result.backend.split(" ")[0], storage);
        RunChannel channel = RunChannel.open(runName, profile.spec.generator.vocabulary());
        RunStorage target = null;
        try {
            target = backend == null ? null : storages.forRun(storage, runName);
            measure(job, backend, target, runName, channel, result, position);
        } catch (Exception e) {
            result.status = "failed: " + rootCause(e);
        } finally {
            channel.close();
            if (target != null) {
                target.delete();
            }
            deleteQuietly(new File(workDir, "local/" + runName).toURI().toString());
        }
        progress.done(String.format(Locale.ROOT, "%s %s (%.0f s)", position, summary(result), (System.nanoTime() - start) / 1e9));
        return result;
    }

    private void measure(
            BenchJob job,
            Backend backend,
            RunStorage target,
            String runName,
            RunChannel channel,
            RunResult result,
            String position)
            throws Exception {
        Configuration conf = clusterConfiguration(backend, target, runName);
        MiniCluster cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(conf)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(profile.spec.parallelism)
                                .build());
        StorageScanner scanner = target == null ? null : new StorageScanner(target.contents(), 250);
        try {
            // the previous run's cluster lets go of its state a while after it closed
            LiveHeap.settled(Duration.ofMillis(500), 20);
            cluster.start();
            StreamExecutionEnvironment env = new StreamExecutionEnvironment(conf);
            env.setParallelism(profile.spec.parallelism);
            job.build(env, profile.spec, runName);
            JobGraph jobGraph = env.getStreamGraph().getJobGraph();
            // Without a classpath entry Flink resolves job classes through the system class loader,
            // which under `mvn exec:java` does not hold them; with one (and parent-first order) the
            // job shares this JVM's classes, and so the run's channel.
            jobGraph.setClasspaths(
                    Collections.singletonList(
                            ConfigurationRun.class.getProtectionDomain().getCodeSource().getLocation()));
            if (scanner != null) {
                scanner.start();
            }
            JobID jobId = cluster.submitJob(jobGraph).get().getJobID();

            Timeline timeline = new Timeline(channel, new TaskThreadCpu(job.countingOperator()));
            String prefix = position + " " + result.label();
            timeline.awaitFirstRecords(cluster, jobId, prefix);
            // live heap with the cluster up and the state still empty; the job barely started
            long heapAtStart = LiveHeap.collected();
            Map<String, Long> classesAtStart = HeapBreakdown.histogram();
            // the measured run is the steady state: after the first pass has written every key,
            // and whatever else the job names (TopK: the first pass's windows fired)
            long first = timeline.awaitProcessed(
                    job.steadyStateRecords(profile.spec), cluster, jobId, prefix + " to steady state");
            long firstMillis = System.currentTimeMillis();
            long runNanos = (long) (profile.runSeconds * 1e9);
            boolean checkpointed = backend != null;
            long deadline = first + runNanos + TimeUnit.SECONDS.toNanos(120);
            while (true) {
                timeline.sample(prefix + " running");
                failIfEnded(cluster, jobId);
                long now = System.nanoTime();
                if (now - first >= runNanos
                        && (!checkpointed || checkpointsSince(cluster, jobId, firstMillis).completed > 0)) {
                    break;
                }
                if (now > deadline) {
                    throw new IllegalStateException("no checkpoint completed within 120 s after the measured run");
                }
            }
            long endMillis = System.currentTimeMillis();
            long secondHalf = first + runNanos / 2;
            result.throughput = timeline.rateSince(secondHalf);
            result.cpuMicrosPerRecord = timeline.cpuMicrosPerRecordSince(secondHalf, Timeline.JVM_CPU);
            result.taskCpuMicrosPerRecord =
                    timeline.cpuMicrosPerRecordSince(secondHalf, Timeline.TASK_CPU);

            result.heapBytes = LiveHeap.collected() - heapAtStart;
            result.heapBreakdown = HeapBreakdown.between(classesAtStart, HeapBreakdown.histogram());
            if (scanner != null) {
                result.storageBytesInUse = scanner.presentBytes();
            }

            if (checkpointed && profile.injectFailure) {
                measureRecovery(cluster, jobId, channel, timeline, result, prefix);
            }
            channel.requestStop();
            JobResult jobResult = cluster.requestJobResult(jobId).get(10, TimeUnit.MINUTES);
            result.recordsProcessed = channel.processed();
            throwIfFailed(jobResult);
            ArchivedExecutionGraph graph = cluster.getArchivedExecutionGraph(jobId).get();
            if (checkpointed) {
                result.checkpoints = CheckpointFigures.of(graph.getCheckpointStatsSnapshot(), firstMillis, endMillis);
            }
            if (scanner != null) {
                scanner.close();
                result.storageBytesWritten = scanner.writtenBytes();
            }
            progress.update(prefix + " verifying");
            Verification verification = job.verify(profile.spec, channel);
            result.verified = verification.passed;
            result.verification = verification.toString();
        } finally {
            if (scanner != null) {
                scanner.close();
            }
            cluster.close();
        }
    }

    private void measureRecovery(
            MiniCluster cluster, JobID jobId, RunChannel channel, Timeline timeline, RunResult result, String prefix)
            throws Exception {
        double target = result.throughput * FULL_THROUGHPUT;
        channel.armFailure();
        long armed = System.nanoTime();
        while (channel.failureNanos() == 0) {
            timeline.sample(prefix + " injecting failure");
            if (System.nanoTime() - armed > TimeUnit.SECONDS.toNanos(30)) {
                throw new IllegalStateException("the source did not take the injected failure within 30 s");
            }
        }
        long failure = channel.failureNanos();
        long timeout = failure + (long) (profile.recoveryTimeoutSeconds * 1e9);
        long firstRecord = -1;
        long fullAt = -1;
        while (fullAt < 0 && System.nanoTime() < timeout) {
            timeline.sample(prefix + " recovering");
            failIfEnded(cluster, jobId);
            firstRecord = channel.firstRecordAfter(failure);
            if (firstRecord > 0) {
                fullAt = timeline.firstFullWindowStart(firstRecord, target);
            }
        }
        result.recoveryFirstRecordMs = firstRecord < 0 ? -1 : (firstRecord - failure) / 1_000_000;
        result.recoveryFullThroughputMs = fullAt < 0 ? -1 : (fullAt - failure) / 1_000_000;
        // keep running briefly at full speed, so the run ends with a normal checkpoint cadence
        long settle = System.nanoTime() + RATE_WINDOW_NANOS;
        while (System.nanoTime() < settle) {
            timeline.sample(prefix + " recovered");
        }
        result.recoveryCurve = timeline.since(failure);
    }

    private Configuration clusterConfiguration(Backend backend, RunStorage target, String runName) {
        Configuration conf = new Configuration();
        conf.setString("rest.bind-port", "0");
        conf.setString("classloader.resolve-order", "parent-first");
        conf.setString("taskmanager.memory.managed.size", profile.managedMemoryMb + "m");
        conf.setString("restart-strategy.type", "fixed-delay");
        conf.setString("restart-strategy.fixed-delay.attempts", "3");
        conf.setString("restart-strategy.fixed-delay.delay", "0 ms");
        conf.setString("web.checkpoints.history", "100000");
        conf.setString("flink.hadoop.dfs.replication", "1");
        HeapGauges.configure(conf);
        if (backend == null) {
            conf.setString("state.backend.type", "hashmap");
        } else {
            conf.setString("execution.checkpointing.interval", profile.checkpointIntervalMs + " ms");
            conf.setString("execution.checkpointing.tolerable-failed-checkpoints", "1000");
            target.configureCheckpoints(conf);
            backend.configure(conf, target.logDirectory(), new File(workDir, "local/" + runName).getAbsolutePath());
        }
        profile.flinkOptions.forEach(conf::setString);
        return conf;
    }

    /** Throws with the job's failure if the job ended while it should still be running. */
    private static void failIfEnded(MiniCluster cluster, JobID jobId) throws Exception {
        if (cluster.getJobStatus(jobId).get().isGloballyTerminalState()) {
            throwIfFailed(cluster.requestJobResult(jobId).get());
            throw new IllegalStateException("the job ended before the harness stopped it");
        }
    }

    private static void throwIfFailed(JobResult jobResult) {
        if (!jobResult.isSuccess()) {
            Throwable failure = jobResult.getSerializedThrowable()
                    .map(t -> t.deserializeError(ConfigurationRun.class.getClassLoader()))
                    .orElse(new IllegalStateException("unknown failure"));
            throw new IllegalStateException("the job failed", failure);
        }
    }

    /** The checkpoints of the job that began at or after {@code fromMillis} and have ended. */
    private static CheckpointFigures checkpointsSince(MiniCluster cluster, JobID jobId, long fromMillis) {
        try {
            return CheckpointFigures.of(
                    cluster.getExecutionGraph(jobId).get().getCheckpointStatsSnapshot(),
                    fromMillis,
                    System.currentTimeMillis());
        } catch (Exception e) {
            return CheckpointFigures.none();
        }
    }

    private static String summary(RunResult r) {
        if (!r.ran()) {
            return r.label() + ": " + r.status;
        }
        return String.format(
                Locale.ROOT,
                "%s: %s rec/s, %d checkpoints (p99 %d ms), recovery %s / %s ms, %s",
                r.label(),
                Format.count(r.throughput),
                r.checkpoints.completed,
                r.checkpoints.durationP99Ms,
                Format.millis(r.recoveryFirstRecordMs),
                Format.millis(r.recoveryFullThroughputMs),
                r.verification);
    }

    private static String rootCause(Throwable e) {
        Throwable cause = e;
        while (cause.getCause() != null && cause.getCause() != cause) {
            cause = cause.getCause();
        }
        // name the first frame past argument checks, where the failing code is
        String where = "";
        for (StackTraceElement frame : cause.getStackTrace()) {
            if (!frame.getClassName().startsWith("java.")
                    && !frame.getClassName().startsWith("org.apache.flink.util.")
                    && !frame.getClassName().startsWith("org.apache.flink.core.memory.")) {
                where = " (at " + frame + ")";
                break;
            }
        }
        return cause.getClass().getSimpleName() + ": " + cause.getMessage() + where;
    }

    private static void deleteQuietly(String uri) {
        if (uri == null) {
            return;
        }
        try {
            Path path = new Path(uri);
            path.getFileSystem().delete(path, true);
        } catch (IOException e) {
            // leftovers live in the work directory, which is deleted at the end
        }
    }

    /** The CPU time of every thread of this JVM so far, or -1 if the JVM does not report it. */
    private static long processCpuNanos() {
        java.lang.management.OperatingSystemMXBean os = ManagementFactory.getOperatingSystemMXBean();
        return os instanceof com.sun.management.OperatingSystemMXBean
                ? ((com.sun.management.OperatingSystemMXBean) os).getProcessCpuTime()
                : -1;
    }

    /**
     * Samples of (time, processed records, the JVM's CPU time, the counting task's CPU time) taken
     * every {@value #SAMPLE_MILLIS} ms.
     */
    private final class Timeline {
        /** Where a sample holds the JVM's CPU time, and the counting task's. */
        static final int JVM_CPU = 2;
        static final int TASK_CPU = 3;

        private final RunChannel channel;
        private final TaskThreadCpu taskCpu;
        private final List<long[]> samples = new ArrayList<>();

        Timeline(RunChannel channel, TaskThreadCpu taskCpu) {
            this.channel = channel;
            this.taskCpu = taskCpu;
        }

        /** Sleeps one sample period, records a sample and shows it on the progress line. */
        void sample(String status) throws InterruptedException {
            Thread.sleep(SAMPLE_MILLIS);
            long now = System.nanoTime();
            long processed = channel.processed();
            samples.add(new long[] {now, processed, processCpuNanos(), taskCpu.nanos()});
            progress.update(
                    String.format(
                            Locale.ROOT,
                            "%s: %s records, %s rec/s",
                            status,
                            Format.count(processed),
                            Format.count(rateOver(now - RATE_WINDOW_NANOS, now))));
        }

        long awaitFirstRecords(MiniCluster cluster, JobID jobId, String prefix) throws Exception {
            long start = System.nanoTime();
            while (channel.processed() == 0) {
                sample(prefix + " starting");
                failIfEnded(cluster, jobId);
                if (System.nanoTime() - start > TimeUnit.SECONDS.toNanos(120)) {
                    throw new IllegalStateException("no record processed within 120 s");
                }
            }
            return System.nanoTime();
        }

        /** Waits until {@code records} were processed; returns when. */
        long awaitProcessed(long records, MiniCluster cluster, JobID jobId, String status) throws Exception {
            while (channel.processed() < records) {
                sample(status);
                failIfEnded(cluster, jobId);
            }
            return System.nanoTime();
        }

        /**
         * The samples from {@code from} on, as (ms since {@code from}, records processed since the
         * last sample before it).
         */
        List<long[]> since(long from) {
            long before = 0;
            List<long[]> curve = new ArrayList<>();
            for (long[] s : samples) {
                if (s[0] < from) {
                    before = s[1];
                } else {
                    curve.add(new long[] {(s[0] - from) / 1_000_000, s[1] - before});
                }
            }
            return curve;
        }

        /** Records per second from the first sample at or after {@code from} to the last sample. */
        double rateSince(long from) {
            long[] last = samples.get(samples.size() - 1);
            return rateOver(from, last[0]);
        }

        private double rateOver(long from, long to) {
            long[][] window = window(from, to);
            if (window == null) {
                return 0;
            }
            return (window[1][1] - window[0][1]) * 1e9 / (window[1][0] - window[0][0]);
        }

        /**
         * CPU time per record, in microseconds, over the window of {@link #rateSince}: the JVM's
         * ({@link #JVM_CPU}) or the counting task's ({@link #TASK_CPU}); -1 if it was not measured
         * at both ends of the window or no record was processed.
         */
        double cpuMicrosPerRecordSince(long from, int clock) {
            long[][] window = window(from, samples.get(samples.size() - 1)[0]);
            if (window == null
                    || window[0][clock] < 0
                    || window[1][clock] < window[0][clock]
                    || window[1][1] <= window[0][1]) {
                return -1;
            }
            return (window[1][clock] - window[0][clock]) / 1e3 / (window[1][1] - window[0][1]);
        }

        /** The first sample at or after {@code from} and the last at or before {@code to}, or null. */
        private long[][] window(long from, long to) {
            long[] start = null;
            long[] end = null;
            for (long[] s : samples) {
                if (start == null && s[0] >= from) {
                    start = s;
                }
                if (s[0] <= to) {
                    end = s;
                }
            }
            return start == null || end == null || end[0] <= start[0] ? null : new long[][] {start, end};
        }

        /**
         * The start of the first window of {@link #RATE_WINDOW_NANOS} after {@code after} whose rate
         * reaches {@code target}, or -1.
         */
        long firstFullWindowStart(long after, double target) {
            for (int i = 0; i < samples.size(); i++) {
                long[] start = samples.get(i);
                if (start[0] < after) {
                    continue;
                }
                for (int j = i + 1; j < samples.size(); j++) {
                    long[] end = samples.get(j);
                    if (end[0] - start[0] >= RATE_WINDOW_NANOS) {
                        if ((end[1] - start[1]) * 1e9 / (end[0] - start[0]) >= target) {
                            return start[0];
                        }
                        break;
                    }
                }
            }
            return -1;
        }
    }
}
