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

package org.appendlog.bench.snapshot;

import org.appendlog.bench.backend.KeyedBackends;
import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.testing.MetricsRecorder;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.util.FileUtils;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.SplittableRandom;
import java.util.concurrent.RunnableFuture;

import static org.appendlog.statebackend.metrics.AppendLogMetrics.FULL_BATCHES;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.LIVE_ENTRIES;

/**
 * The heap that a native savepoint and a full checkpoint of a large keyed state take, on the
 * append-log backend against {@code hashmap}'s savepoint of the same state ({@link PeakHeap}
 * says how it is measured). One process: {@code --keys} values of {@code --value-bytes} random
 * bytes (incompressible: LZ4 saves nothing) in one keyed {@code ValueState<byte[]>} of a backend
 * that owns all 128 key groups, built outside a job as a task builds it; files on local disk.
 *
 * <ol>
 *   <li>{@code hashmap}: a native savepoint of the filled backend;
 *   <li>{@code appendlog}: a native savepoint of the same state;
 *   <li>{@code appendlog}: a backend restored from that savepoint, one key removed, takes its
 *       first checkpoint (a full batch of every live entry), which completes; measured until the
 *       index learned the batch.
 * </ol>
 *
 * <pre>
 * ./mvnw -B -q -pl flink-statebackend-appendlog,flink-hbase-checkpoint,benchmark-jobs compile \
 *     dependency:build-classpath -Dmdep.outputFile=target/classpath
 * java -XX:+UseParallelGC -Xms8g -Xmx8g -Xmn512m \
 *     -cp benchmark-jobs/target/classes:$(cat benchmark-jobs/target/classpath) \
 *     org.appendlog.bench.snapshot.SnapshotHeap --keys 2000000 --value-bytes 1100
 * </pre>
 */
public final class SnapshotHeap {

    private static final String OPERATOR = "snapshot-heap";
    private static final ValueStateDescriptor<byte[]> VALUES =
            new ValueStateDescriptor<>("values", BytePrimitiveArraySerializer.INSTANCE);

    private final int keys;
    private final int valueBytes;
    private final Path dir;
    private final List<String> rows = new ArrayList<>();

    private SnapshotHeap(int keys, int valueBytes, Path dir) {
        this.keys = keys;
        this.valueBytes = valueBytes;
        this.dir = dir;
    }

    public static void main(String[] args) throws Exception {
        Map<String, String> options = new HashMap<>();
        for (int i = 0; i + 1 < args.length; i += 2) {
            options.put(args[i].replaceFirst("^--", ""), args[i + 1]);
        }
        Path dir = Files.createTempDirectory("snapshot-heap");
        try {
            SnapshotHeap benchmark =
                    new SnapshotHeap(
                            Integer.parseInt(options.getOrDefault("keys", "2000000")),
                            Integer.parseInt(options.getOrDefault("value-bytes", "1100")),
                            dir);
            benchmark.run();
            System.out.println(benchmark.table());
        } finally {
            FileUtils.deleteDirectory(dir.toFile());
        }
    }

    private void run() throws Exception {
        System.out.printf(
                "%d keys, values of %d random bytes; JVM heap maximum %s%n",
                keys, valueBytes, mb(Runtime.getRuntime().maxMemory()));
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, dir.resolve("log").toUri().toString());
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        AppendLogStateBackend appendlog =
                new AppendLogStateBackend().configure(config, SnapshotHeap.class.getClassLoader());

        hashmapSavepoint();
        KeyedStateHandle savepoint = appendlogSavepoint(appendlog);
        appendlogFullCheckpoint(appendlog, savepoint);
    }

    private KeyedStateHandle appendlogSavepoint(AppendLogStateBackend appendlog) throws Exception {
        AbstractKeyedStateBackend<Integer> backend =
                KeyedBackends.build(appendlog, OPERATOR, new MetricsRecorder(), List.of());
        try {
            fill(backend);
            return measure("appendlog native savepoint", backend, 1, savepointOptions(), null);
        } finally {
            backend.dispose();
        }
    }

    /** The first checkpoint of a backend restored from {@code savepoint}, one key removed. */
    private void appendlogFullCheckpoint(AppendLogStateBackend appendlog, KeyedStateHandle savepoint)
            throws Exception {
        // Its gauges hold the backend: it goes with this method's frame.
        MetricsRecorder metrics = new MetricsRecorder();
        AbstractKeyedStateBackend<Integer> backend =
                KeyedBackends.build(appendlog, OPERATOR, metrics, List.of(savepoint));
        try {
            ValueState<byte[]> values = values(backend);
            backend.setCurrentKey(0);
            values.clear();
            measure(
                    "appendlog full checkpoint (first after the restore), until indexed",
                    backend,
                    2,
                    CheckpointOptions.forCheckpointWithDefaultLocation(),
                    metrics);
            if (metrics.value(FULL_BATCHES) != 1) {
                throw new IllegalStateException(
                        "the checkpoint after the restore was not full: "
                                + metrics.value(FULL_BATCHES)
                                + " full batches");
            }
        } finally {
            backend.dispose();
        }
    }

    private void hashmapSavepoint() throws Exception {
        AbstractKeyedStateBackend<Integer> backend =
                KeyedBackends.build(
                        new HashMapStateBackend(), OPERATOR, new MetricsRecorder(), List.of());
        try {
            fill(backend);
            measure("hashmap native savepoint", backend, 1, savepointOptions(), null);
        } finally {
            backend.dispose();
        }
    }

    private void fill(AbstractKeyedStateBackend<Integer> backend) throws Exception {
        long start = System.nanoTime();
        ValueState<byte[]> values = values(backend);
        for (int key = 0; key < keys; key++) {
            byte[] value = new byte[valueBytes];
            new SplittableRandom(key).nextBytes(value);
            backend.setCurrentKey(key);
            values.update(value);
        }
        System.out.printf(
                "filled %s in %.1f s%n",
                backend.getClass().getSimpleName(), (System.nanoTime() - start) / 1e9);
    }

    /**
     * Takes snapshot {@code id} and, with {@code indexed} given, completes it and waits until the
     * append-log index holds every live entry of it again; records the heap it took.
     */
    private KeyedStateHandle measure(
            String what,
            AbstractKeyedStateBackend<Integer> backend,
            long id,
            CheckpointOptions options,
            MetricsRecorder indexed)
            throws Exception {
        KeyedStateHandle handle;
        PeakHeap heap = PeakHeap.watch();
        long start = System.nanoTime();
        try {
            RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot =
                    backend.snapshot(id, id, KeyedBackends.fileStreams(dir), options);
            snapshot.run();
            handle = snapshot.get().getJobManagerOwnedSnapshot();
            if (indexed != null) {
                backend.notifyCheckpointComplete(id);
                // The completed full batch replaces the index, which ends with one entry less.
                while (indexed.value(LIVE_ENTRIES) != keys - 1) {
                    Thread.sleep(1);
                }
            }
        } finally {
            heap.close();
        }
        String row =
                String.format(
                        Locale.ROOT,
                        "| %s | %s | %.1f | %s | %s | %s | %d |",
                        what,
                        mb(handle.getStateSize()),
                        (System.nanoTime() - start) / 1e9,
                        mb(heap.liveBefore()),
                        mb(heap.peakUsedAbove()),
                        mb(heap.peakAfterGcAbove()),
                        heap.collections());
        System.out.println(row);
        rows.add(row);
        return handle;
    }

    private String table() {
        StringBuilder table =
                new StringBuilder(
                        "| operation | written | seconds | live heap before | peak used heap above it"
                                + " | most heap left by a GC above it | GCs |\n"
                                + "|---|---:|---:|---:|---:|---:|---:|\n");
        rows.forEach(row -> table.append(row).append('\n'));
        return table.toString();
    }

    private static CheckpointOptions savepointOptions() {
        return new CheckpointOptions(
                SavepointType.savepoint(SavepointFormatType.NATIVE),
                CheckpointStorageLocationReference.getDefault());
    }

    private static ValueState<byte[]> values(AbstractKeyedStateBackend<Integer> backend)
            throws Exception {
        return backend.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
    }

    private static String mb(long bytes) {
        return String.format(Locale.ROOT, "%.0f MB", bytes / 1e6);
    }
}
