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

package org.appendlog.bench.compaction;

import org.appendlog.bench.backend.KeyedBackends;
import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.testing.MetricsRecorder;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;
import org.apache.flink.util.FileUtils;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Stream;

import static org.appendlog.statebackend.metrics.AppendLogMetrics.COMPACTIONS_RUN;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.COMPACTION_BYTES_READ;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.COMPACTION_BYTES_WRITTEN;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.LIVE_BYTES;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.RESTORE_BYTES_READ;

/**
 * The trade-off that the Samza study measured for Kafka log compaction, on the append-log
 * backend: for each {@code min-dirty-ratio}, the log's size over time, compaction's CPU and bytes,
 * and the restore time of the last checkpoint; plus compaction off. One process, one run, so the
 * numbers compare with each other.
 *
 * <p>Workload: {@code --keys} keys written once, then per checkpoint {@code --update-fraction} of
 * them (uniformly at random, seeded) rewritten; only the latest checkpoint is retained.
 *
 * <pre>
 * ./mvnw -pl benchmark-jobs exec:exec -Dexec.mainClass=org.appendlog.bench.compaction.CompactionSweep \
 *     -Dexec.args="--keys 50000 --checkpoints 200"
 * </pre>
 */
public final class CompactionSweep {

    private static final double[] RATIOS = {0.1, 0.33, 0.5, 0.66, 0.9};
    private static final ValueStateDescriptor<Long> STATE =
            new ValueStateDescriptor<>("value", LongSerializer.INSTANCE);

    private final int keys;
    private final int checkpoints;
    private final double updateFraction;
    private final MemorySize segmentSize;
    private final long intervalMillis;

    CompactionSweep(
            int keys, int checkpoints, double updateFraction, MemorySize segmentSize, long intervalMillis) {
        this.keys = keys;
        this.checkpoints = checkpoints;
        this.updateFraction = updateFraction;
        this.segmentSize = segmentSize;
        this.intervalMillis = intervalMillis;
    }

    /** What one configuration did. */
    static final class Result {
        final String name;
        final double[] logMegabytes;
        long passes;
        long compactionRead;
        long compactionWritten;
        long compactionCpuMillis;
        long restoreMillis;
        long restoreBytes;
        long liveBytes;
        int segmentsReferenced;

        Result(String name, int checkpoints) {
            this.name = name;
            this.logMegabytes = new double[checkpoints + 1];
        }

        double finalLogMegabytes() {
            return logMegabytes[logMegabytes.length - 1];
        }

        double meanLogMegabytes() {
            double sum = 0;
            for (double v : logMegabytes) {
                sum += v;
            }
            return sum / logMegabytes.length;
        }
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        CompactionSweep sweep =
                new CompactionSweep(
                        Integer.parseInt(options.getOrDefault("keys", "20000")),
                        Integer.parseInt(options.getOrDefault("checkpoints", "120")),
                        Double.parseDouble(options.getOrDefault("update-fraction", "0.25")),
                        MemorySize.parse(options.getOrDefault("segment-size", "256kb")),
                        Long.parseLong(options.getOrDefault("interval-ms", "20")));
        File out = new File(options.getOrDefault("out", "results/compaction"));
        List<Result> results = sweep.runAll();
        write(results, out);
        System.out.println(table(results));
        System.out.println("Results in " + out.getAbsolutePath());
    }

    List<Result> runAll() throws Exception {
        // Unrecorded: the first run would otherwise also pay for class loading and JIT.
        new CompactionSweep(Math.min(keys, 2_000), 5, updateFraction, segmentSize, 0)
                .run("warm-up", true, 0.5);
        List<Result> results = new ArrayList<>();
        for (double ratio : RATIOS) {
            results.add(run("min-dirty-ratio " + ratio, true, ratio));
        }
        results.add(run("compaction off", false, 0.5));
        return results;
    }

    private Result run(String name, boolean compaction, double ratio) throws Exception {
        System.out.printf("running %s: %d keys, %d checkpoints rewriting %.0f%% of them%n",
                name, keys, checkpoints, updateFraction * 100);
        Path dir = Files.createTempDirectory("compaction-sweep");
        try {
            return run(name, compaction, ratio, dir);
        } finally {
            FileUtils.deleteDirectory(dir.toFile());
        }
    }

    private Result run(String name, boolean compaction, double ratio, Path dir) throws Exception {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, dir.toUri().toString());
        config.set(AppendLogOptions.SEGMENT_SIZE, segmentSize);
        config.set(AppendLogOptions.COMPACTION_ENABLED, compaction);
        config.set(AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO, ratio);
        AppendLogStateBackend stateBackend =
                new AppendLogStateBackend().configure(config, CompactionSweep.class.getClassLoader());
        Result result = new Result(name, checkpoints);
        MetricsRecorder metrics = new MetricsRecorder();
        SharedStateRegistry registry = new SharedStateRegistryImpl();
        Map<Integer, Long> expected = new HashMap<>();
        Random random = new Random(42);
        CompactorCpu cpu = new CompactorCpu();
        KeyedStateHandle last;
        AbstractKeyedStateBackend<Integer> backend =
                KeyedBackends.build(stateBackend, "sweep", metrics, Collections.emptyList());
        try {
            ValueState<Long> state =
                    backend.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, STATE);
            for (int key = 0; key < keys; key++) {
                write(backend, state, expected, key, 0);
            }
            last = checkpoint(backend, registry, 0);
            result.logMegabytes[0] = megabytes(dir);
            int updates = (int) (keys * updateFraction);
            for (int c = 1; c <= checkpoints; c++) {
                for (int i = 0; i < updates; i++) {
                    write(backend, state, expected, random.nextInt(keys), c);
                }
                last = checkpoint(backend, registry, c);
                Thread.sleep(intervalMillis);
                cpu.sample();
                result.logMegabytes[c] = megabytes(dir);
            }
            result.passes = metrics.value(COMPACTIONS_RUN);
            result.compactionRead = metrics.value(COMPACTION_BYTES_READ);
            result.compactionWritten = metrics.value(COMPACTION_BYTES_WRITTEN);
            result.liveBytes = metrics.value(LIVE_BYTES);
        } finally {
            backend.dispose();
        }
        result.compactionCpuMillis = cpu.totalMillis();
        result.segmentsReferenced =
                ((org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle) last).getSharedState().size();

        MetricsRecorder restoreMetrics = new MetricsRecorder();
        long start = System.nanoTime();
        AbstractKeyedStateBackend<Integer> restored =
                KeyedBackends.build(stateBackend, "sweep", restoreMetrics, Collections.singletonList(last));
        result.restoreMillis = (System.nanoTime() - start) / 1_000_000;
        result.restoreBytes = restoreMetrics.value(RESTORE_BYTES_READ);
        try {
            verify(restored, expected);
        } finally {
            restored.dispose();
        }
        registry.unregisterUnusedState(Long.MAX_VALUE);
        return result;
    }

    private static void write(
            AbstractKeyedStateBackend<Integer> backend,
            ValueState<Long> state,
            Map<Integer, Long> expected,
            int key,
            long value)
            throws IOException {
        backend.setCurrentKey(key);
        state.update(value * 1_000_003L + key);
        expected.put(key, value * 1_000_003L + key);
    }

    private static void verify(AbstractKeyedStateBackend<Integer> backend, Map<Integer, Long> expected)
            throws Exception {
        ValueState<Long> state =
                backend.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, STATE);
        for (Map.Entry<Integer, Long> e : expected.entrySet()) {
            backend.setCurrentKey(e.getKey());
            if (!e.getValue().equals(state.value())) {
                throw new IllegalStateException(
                        "Restored value of key " + e.getKey() + " is " + state.value() + ", expected " + e.getValue());
            }
        }
    }

    /** A checkpoint taken, registered, completed; only the latest is retained. */
    private static KeyedStateHandle checkpoint(
            AbstractKeyedStateBackend<Integer> backend, SharedStateRegistry registry, long id)
            throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                backend.snapshot(
                        id, id, new MemCheckpointStreamFactory(Integer.MAX_VALUE),
                        CheckpointOptions.forCheckpointWithDefaultLocation());
        future.run();
        KeyedStateHandle handle = future.get().getJobManagerOwnedSnapshot();
        registry.registerAll(Collections.singletonList(handle), id);
        registry.unregisterUnusedState(id);
        backend.notifyCheckpointComplete(id);
        return handle;
    }

    private static double megabytes(Path dir) throws IOException {
        try (Stream<Path> files = Files.walk(dir)) {
            return files.filter(p -> p.toString().endsWith(".seg"))
                            .mapToLong(p -> p.toFile().length())
                            .sum()
                    / 1e6;
        }
    }

    /** CPU time of the compactor threads, sampled while they live. */
    private static final class CompactorCpu {
        private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
        private final Map<Long, Long> cpuNanos = new HashMap<>();

        void sample() {
            for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
                if (info != null && info.getThreadName().startsWith("appendlog-compactor")) {
                    long nanos = threads.getThreadCpuTime(info.getThreadId());
                    if (nanos > 0) {
                        cpuNanos.merge(info.getThreadId(), nanos, Math::max);
                    }
                }
            }
        }

        long totalMillis() {
            return cpuNanos.values().stream().mapToLong(Long::longValue).sum() / 1_000_000;
        }
    }

    static String table(List<Result> results) {
        StringBuilder md = new StringBuilder();
        md.append("| configuration | final log MB | mean log MB | live MB | compactions | compaction read MB | compaction written MB | compaction CPU ms | restore ms | restore read MB | segments in last checkpoint |\n");
        md.append("|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|\n");
        for (Result r : results) {
            md.append(String.format(Locale.ROOT,
                    "| %s | %.2f | %.2f | %.2f | %d | %.2f | %.2f | %d | %d | %.2f | %d |%n",
                    r.name, r.finalLogMegabytes(), r.meanLogMegabytes(), r.liveBytes / 1e6, r.passes,
                    r.compactionRead / 1e6, r.compactionWritten / 1e6, r.compactionCpuMillis,
                    r.restoreMillis, r.restoreBytes / 1e6, r.segmentsReferenced));
        }
        return md.toString();
    }

    private static void write(List<Result> results, File out) throws IOException {
        Files.createDirectories(out.toPath());
        try (PrintWriter csv = new PrintWriter(new File(out, "compaction-sweep.csv"), "UTF-8")) {
            csv.println("configuration,final_log_mb,mean_log_mb,live_mb,compactions,compaction_read_mb,compaction_written_mb,compaction_cpu_ms,restore_ms,restore_read_mb,segments");
            for (Result r : results) {
                csv.printf(Locale.ROOT, "%s,%.3f,%.3f,%.3f,%d,%.3f,%.3f,%d,%d,%.3f,%d%n",
                        r.name, r.finalLogMegabytes(), r.meanLogMegabytes(), r.liveBytes / 1e6, r.passes,
                        r.compactionRead / 1e6, r.compactionWritten / 1e6, r.compactionCpuMillis,
                        r.restoreMillis, r.restoreBytes / 1e6, r.segmentsReferenced);
            }
        }
        try (PrintWriter csv = new PrintWriter(new File(out, "log-size-over-time.csv"), "UTF-8")) {
            StringBuilder header = new StringBuilder("checkpoint");
            results.forEach(r -> header.append(',').append(r.name));
            csv.println(header);
            for (int c = 0; c < results.get(0).logMegabytes.length; c++) {
                StringBuilder row = new StringBuilder(String.valueOf(c));
                for (Result r : results) {
                    row.append(String.format(Locale.ROOT, ",%.3f", r.logMegabytes[c]));
                }
                csv.println(row);
            }
        }
        Files.writeString(Paths.get(out.getPath(), "compaction-sweep.md"), table(results));
        LineChart chart = new LineChart("State log size on disk per checkpoint", "checkpoint", "MB");
        results.forEach(r -> chart.add(r.name, r.logMegabytes));
        chart.write(new File(out, "log-size-over-time.png"));
    }
}
