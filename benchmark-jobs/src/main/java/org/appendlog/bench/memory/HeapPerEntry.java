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

package org.appendlog.bench.memory;

import org.appendlog.bench.backend.KeyedBackends;
import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.testing.MetricsRecorder;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;
import org.apache.flink.util.FileUtils;

import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.time.Duration;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.RunnableFuture;

import static org.appendlog.statebackend.metrics.AppendLogMetrics.CHANGE_BUFFER_HEAP_BYTES;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.INDEX_HEAP_BYTES;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.LIVE_ENTRIES;

/**
 * The live heap one entry of keyed state costs, on {@code hashmap} and on {@code appendlog} (state,
 * index and change tracking together, once a checkpoint has completed and the index holds every
 * entry), for keys of {@code --key-chars} and values of {@code --value-bytes}: the figures behind
 * sizing a TaskManager. One process; {@code --entries} entries of a {@code ValueState<byte[]>} keyed
 * by {@code String}, in a backend owning all 128 key groups; live heap after a full collection
 * (run it with {@code -XX:+UseParallelGC}, whose {@code System.gc()} is a full collection).
 *
 * <pre>
 * ./mvnw -B -q -pl flink-statebackend-appendlog,flink-hbase-checkpoint,benchmark-jobs compile \
 *     dependency:build-classpath -Dmdep.outputFile=target/classpath
 * java -XX:+UseParallelGC -Xms6g -Xmx6g \
 *     -cp benchmark-jobs/target/classes:$(cat benchmark-jobs/target/classpath) \
 *     org.appendlog.bench.memory.HeapPerEntry --entries 1000000 --key-chars 8,40 --value-bytes 8,264
 * </pre>
 *
 * Besides one row per backend and shape, it fits each backend's cost as {@code a + k * key chars
 * + v * value bytes} from the four corners (smallest and largest of each list).
 */
public final class HeapPerEntry {

    private static final ValueStateDescriptor<byte[]> VALUES =
            new ValueStateDescriptor<>("values", BytePrimitiveArraySerializer.INSTANCE);

    private final int entries;
    private final Path dir;
    private final Map<String, Double> perEntry = new HashMap<>();
    private final List<String> rows = new ArrayList<>();

    private HeapPerEntry(int entries, Path dir) {
        this.entries = entries;
        this.dir = dir;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        int entries = Integer.parseInt(options.getOrDefault("entries", "1000000"));
        Path dir = Files.createTempDirectory("heap-per-entry");
        try {
            HeapPerEntry benchmark = new HeapPerEntry(entries, dir);
            if (options.containsKey("one")) {
                String[] one = options.get("one").split(",");
                benchmark.measure(one[0], Integer.parseInt(one[1]), Integer.parseInt(one[2]));
                return;
            }
            int[] keyChars = ints(options.getOrDefault("key-chars", "8,40"));
            int[] valueBytes = ints(options.getOrDefault("value-bytes", "8,264"));
            for (int k : keyChars) {
                for (int v : valueBytes) {
                    for (String backend : List.of("hashmap", "appendlog")) {
                        benchmark.measureInOwnJvm(backend, k, v);
                    }
                }
            }
            System.out.println(benchmark.table());
            System.out.println(benchmark.fits(keyChars, valueBytes));
        } finally {
            FileUtils.deleteDirectory(dir.toFile());
        }
    }

    /**
     * Measures in a JVM of its own, with this one's options, so that no earlier backend's
     * leftovers (threads finishing, pooled buffers) move the baseline.
     */
    private void measureInOwnJvm(String backend, int keyChars, int valueBytes) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(ProcessHandle.current().info().command().orElse("java"));
        command.addAll(ManagementFactory.getRuntimeMXBean().getInputArguments());
        command.addAll(
                List.of(
                        "-cp",
                        System.getProperty("java.class.path"),
                        HeapPerEntry.class.getName(),
                        "--entries",
                        Integer.toString(entries),
                        "--one",
                        backend + "," + keyChars + "," + valueBytes));
        Process child = new ProcessBuilder(command).redirectError(ProcessBuilder.Redirect.DISCARD).start();
        String row = null;
        try (BufferedReader out =
                new BufferedReader(new InputStreamReader(child.getInputStream(), StandardCharsets.UTF_8))) {
            for (String line = out.readLine(); line != null; line = out.readLine()) {
                if (line.startsWith("| ")) {
                    row = line;
                }
            }
        }
        if (child.waitFor() != 0 || row == null) {
            throw new IllegalStateException("The measurement of " + backend + " " + keyChars + "/" + valueBytes + " failed");
        }
        System.out.println(row);
        rows.add(row);
        perEntry.put(backend + "/" + keyChars + "/" + valueBytes, Double.parseDouble(row.split("\\|")[4].trim()));
    }

    private static int[] ints(String list) {
        return Arrays.stream(list.split(",")).mapToInt(s -> Integer.parseInt(s.trim())).toArray();
    }

    private AppendLogStateBackend appendlog() {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, dir.resolve("log").toUri().toString());
        // The live state, not compaction's transient buffers.
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        return new AppendLogStateBackend().configure(config, HeapPerEntry.class.getClassLoader());
    }

    private void measure(String name, int keyChars, int valueBytes) throws Exception {
        String[] figures = new String[2];
        // Loads the classes and fills the caches a backend needs, outside the measurement.
        new HeapPerEntry(1_000, dir).filled(name.equals("appendlog"), keyChars, valueBytes, figures);
        long before = LiveHeap.settled(Duration.ofMillis(100), 50);
        long withState = filled(name.equals("appendlog"), keyChars, valueBytes, figures);
        double bytes = (withState - before) / (double) entries;
        System.out.println(
                String.format(
                        Locale.ROOT,
                        "| %s | %d | %d | %.0f | %s | %s |",
                        name,
                        keyChars,
                        valueBytes,
                        bytes,
                        figures[0],
                        figures[1]));
    }

    /**
     * The live heap with a keyed backend holding the entries, checkpointed; the backend is
     * disposed when this returns, and nothing refers to it any more (its state backend keeps the
     * metric group of the last keyed backend it built, as Flink's backends do, so it goes too).
     */
    private long filled(
            boolean appendlog,
            int keyChars,
            int valueBytes,
            String[] indexAndBuffer)
            throws Exception {
        MetricsRecorder metrics = new MetricsRecorder();
        StateBackend stateBackend = appendlog ? appendlog() : new HashMapStateBackend();
        AbstractKeyedStateBackend<String> backend =
                KeyedBackends.build(
                        stateBackend,
                        "heap-per-entry",
                        StringSerializer.INSTANCE,
                        KeyGroupRange.of(0, 127),
                        metrics,
                        List.of());
        try {
            ValueState<byte[]> values =
                    backend.getPartitionedState(
                            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
            String format = "%0" + keyChars + "d";
            for (int i = 0; i < entries; i++) {
                byte[] value = new byte[valueBytes];
                new SplittableRandom(i).nextBytes(value);
                backend.setCurrentKey(String.format(Locale.ROOT, format, i));
                values.update(value);
            }
            checkpoint(backend, metrics, appendlog ? entries : 0);
            indexAndBuffer[0] =
                    appendlog
                            ? String.format(
                                    Locale.ROOT, "%.0f", metrics.value(INDEX_HEAP_BYTES) / (double) entries)
                            : "-";
            indexAndBuffer[1] =
                    appendlog
                            ? String.format(
                                    Locale.ROOT, "%.1f MB", metrics.value(CHANGE_BUFFER_HEAP_BYTES) / 1e6)
                            : "-";
            return LiveHeap.settled(Duration.ofMillis(100), 50);
        } finally {
            backend.dispose();
        }
    }

    /**
     * A checkpoint that completes; then waits until the append-log index (which learns the batch
     * in the background) holds {@code indexed} entries.
     */
    private static void checkpoint(
            AbstractKeyedStateBackend<String> backend, MetricsRecorder metrics, long indexed)
            throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot =
                backend.snapshot(
                        1,
                        1,
                        new MemCheckpointStreamFactory(Integer.MAX_VALUE),
                        CheckpointOptions.forCheckpointWithDefaultLocation());
        snapshot.run();
        snapshot.get();
        backend.notifyCheckpointComplete(1);
        while (metrics.value(LIVE_ENTRIES) < indexed) {
            Thread.sleep(10);
        }
    }

    private String table() {
        return "| backend | key chars | value bytes | heap per entry (bytes) | of which index | change buffer |\n"
                + "|---|---:|---:|---:|---:|---:|\n"
                + String.join("\n", rows)
                + "\n";
    }

    /** Per backend: bytes per entry, per key char and per value byte, from the four corners. */
    private String fits(int[] keyChars, int[] valueBytes) {
        int k0 = keyChars[0];
        int k1 = keyChars[keyChars.length - 1];
        int v0 = valueBytes[0];
        int v1 = valueBytes[valueBytes.length - 1];
        StringBuilder fit =
                new StringBuilder(
                        "| backend | bytes per entry | per key char | per value byte |\n|---|---:|---:|---:|\n");
        for (String name : List.of("hashmap", "appendlog")) {
            double base = perEntry.get(name + "/" + k0 + "/" + v0);
            double perKey = (perEntry.get(name + "/" + k1 + "/" + v0) - base) / (k1 - k0);
            double perValue = (perEntry.get(name + "/" + k0 + "/" + v1) - base) / (v1 - v0);
            fit.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %.0f | %.2f | %.2f |\n",
                            name,
                            base - perKey * k0 - perValue * v0,
                            perKey,
                            perValue));
        }
        return fit.toString();
    }
}
