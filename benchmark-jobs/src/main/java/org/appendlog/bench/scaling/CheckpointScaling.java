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

package org.appendlog.bench.scaling;

import org.appendlog.bench.backend.KeyedBackends;
import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.testing.MetricsRecorder;

import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.Callable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;

import static org.appendlog.statebackend.metrics.AppendLogMetrics.LIVE_ENTRIES;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.RESTORE_INDEX_MILLIS;

/**
 * Checkpoint and restore of one keyed state against its size and the parallelism, outside a job:
 * {@code parallelism} backends, each owning its subtask's share of the 128 key groups and built
 * as that subtask builds it, hold {@code keys} values of {@code valueBytes} random bytes between
 * them; each step runs on every subtask at once, one thread each, as the subtasks of one
 * TaskManager would. Files on local disk. The values are {@code byte[]}, a mutable type: the
 * append-log backend serializes such changed entries at the barrier, on the task thread (an
 * immutable value, such as word count's {@code Long}, is serialized as it is written).
 *
 * <ol>
 *   <li>checkpoint 1 after the fill writes every entry: its synchronous part (the task thread's
 *       stall), its asynchronous part and the write speed (bytes over the slowest subtask's
 *       asynchronous part);
 *   <li>a tenth of the keys rewritten, checkpoint 2: for {@code appendlog} the changes only, for
 *       {@code hashmap} the whole state again;
 *   <li>every subtask restored from checkpoint 2 and checked value by value: the slowest
 *       subtask's restore, and for {@code appendlog} its index rebuild alone (the
 *       {@code restoreIndexMillis} metric, summed over the subtask's restore threads).
 * </ol>
 */
final class CheckpointScaling {

    static final String STATE_MB = "state MB";
    static final String FIRST_SYNC_MS = "ckpt 1 sync ms";
    static final String FIRST_ASYNC_MS = "ckpt 1 async ms";
    static final String FIRST_TOTAL_MS = "ckpt 1 sync+async ms";
    static final String FIRST_MB_PER_S = "ckpt 1 MB/s";
    static final String SECOND_MB = "ckpt 2 MB";
    static final String SECOND_SYNC_MS = "ckpt 2 sync ms";
    static final String SECOND_TOTAL_MS = "ckpt 2 sync+async ms";
    static final String RESTORE_MS = "restore ms";
    static final String INDEX_MS = "index rebuild ms";
    static final List<String> COLUMNS =
            List.of(
                    STATE_MB,
                    FIRST_SYNC_MS,
                    FIRST_ASYNC_MS,
                    FIRST_TOTAL_MS,
                    FIRST_MB_PER_S,
                    SECOND_MB,
                    SECOND_SYNC_MS,
                    SECOND_TOTAL_MS,
                    RESTORE_MS,
                    INDEX_MS);

    /** Every {@value}-th key is rewritten before checkpoint 2. */
    private static final int REWRITE_EVERY = 10;

    private static final String OPERATOR = "scaling";
    private static final ValueStateDescriptor<byte[]> VALUES =
            new ValueStateDescriptor<>("values", BytePrimitiveArraySerializer.INSTANCE);

    private final int valueBytes;

    CheckpointScaling(int valueBytes) {
        this.valueBytes = valueBytes;
    }

    /** Runs {@code backend} ({@code hashmap} or {@code appendlog}) once, its files under {@code dir}. */
    Measurement run(String backend, int keys, int parallelism, int repetition, Path dir)
            throws Exception {
        StateBackend stateBackend = stateBackend(backend, dir);
        CheckpointStreamFactory streams = KeyedBackends.fileStreams(dir);
        Measurement m = new Measurement(backend, keys, parallelism, repetition);
        // As the checkpoint coordinator does: it gives an incremental handle the shared files
        // that an earlier checkpoint uploaded, which the handle only names.
        SharedStateRegistry registry = new SharedStateRegistryImpl();
        ExecutorService threads = Executors.newFixedThreadPool(parallelism);
        List<Subtask> subtasks = new ArrayList<>();
        try {
            for (int i = 0; i < parallelism; i++) {
                subtasks.add(
                        new Subtask(
                                KeyGroupRangeAssignment.computeKeyGroupRangeForOperatorIndex(
                                        128, parallelism, i),
                                stateBackend instanceof AppendLogStateBackend));
            }
            onEach(threads, subtasks, s -> s.open(stateBackend, List.of()));
            onEach(threads, subtasks, s -> s.write(keys, 0));
            List<Snapshot> first = onEach(threads, subtasks, s -> s.checkpoint(1, streams));
            register(registry, first, 1);
            long stateBytes = first.stream().mapToLong(c -> c.handle.getStateSize()).sum();
            long firstAsync = first.stream().mapToLong(c -> c.asyncNanos).max().getAsLong();
            m.put(STATE_MB, stateBytes / 1e6)
                    .put(FIRST_SYNC_MS, millis(first.stream().mapToLong(c -> c.syncNanos).max().getAsLong()))
                    .put(FIRST_ASYNC_MS, millis(firstAsync))
                    .put(FIRST_TOTAL_MS, millis(first.stream()
                            .mapToLong(c -> c.syncNanos + c.asyncNanos).max().getAsLong()))
                    .put(FIRST_MB_PER_S, first.stream().mapToLong(c -> c.handle.getCheckpointedSize()).sum()
                            / 1e6 / (firstAsync / 1e9));
            onEach(threads, subtasks, s -> s.complete(1));
            onEach(threads, subtasks, s -> s.write(keys, 1));
            List<Snapshot> second = onEach(threads, subtasks, s -> s.checkpoint(2, streams));
            register(registry, second, 2);
            m.put(SECOND_MB, second.stream().mapToLong(c -> c.handle.getCheckpointedSize()).sum() / 1e6)
                    .put(SECOND_SYNC_MS, millis(second.stream().mapToLong(c -> c.syncNanos).max().getAsLong()))
                    .put(SECOND_TOTAL_MS, millis(second.stream()
                            .mapToLong(c -> c.syncNanos + c.asyncNanos).max().getAsLong()));
            onEach(threads, subtasks, s -> s.complete(2));
            onEach(threads, subtasks, Subtask::dispose);

            List<Long> restores = onEach(threads, subtasks, s -> {
                long start = System.nanoTime();
                s.open(stateBackend, List.of(second.get(subtasks.indexOf(s)).handle));
                return System.nanoTime() - start;
            });
            m.put(RESTORE_MS, millis(restores.stream().mapToLong(Long::longValue).max().getAsLong()));
            if (stateBackend instanceof AppendLogStateBackend) {
                m.put(INDEX_MS, subtasks.stream().mapToLong(s -> s.metrics.value(RESTORE_INDEX_MILLIS)).max().getAsLong());
            }
            onEach(threads, subtasks, s -> s.verify(keys));
        } finally {
            for (Subtask s : subtasks) {
                s.dispose();
            }
            threads.shutdownNow();
            registry.close();
        }
        return m;
    }

    private static void register(SharedStateRegistry registry, List<Snapshot> snapshots, long id) {
        for (Snapshot snapshot : snapshots) {
            registry.registerAll(List.of(snapshot.handle), id);
        }
    }

    private static StateBackend stateBackend(String backend, Path dir) {
        switch (backend) {
            case "hashmap":
                return new HashMapStateBackend();
            case "appendlog":
                Configuration config = new Configuration();
                config.set(AppendLogOptions.LOG_DIR, dir.resolve("log").toUri().toString());
                return new AppendLogStateBackend().configure(config, CheckpointScaling.class.getClassLoader());
            default:
                throw new IllegalArgumentException(
                        "--backends: '" + backend + "' is not one of hashmap, appendlog");
        }
    }

    /** The value of {@code key} after {@code version} rewrites. */
    private byte[] value(int key, int version) {
        byte[] value = new byte[valueBytes];
        new SplittableRandom(key * 31L + version).nextBytes(value);
        return value;
    }

    private static double millis(long nanos) {
        return nanos / 1e6;
    }

    private interface Step<T> {
        T run(Subtask subtask) throws Exception;
    }

    /** Runs {@code step} on every subtask at once, one thread each; returns their results in order. */
    private static <T> List<T> onEach(ExecutorService threads, List<Subtask> subtasks, Step<T> step)
            throws Exception {
        List<Future<T>> futures = new ArrayList<>();
        for (Subtask s : subtasks) {
            futures.add(threads.submit((Callable<T>) () -> step.run(s)));
        }
        List<T> results = new ArrayList<>();
        for (Future<T> future : futures) {
            results.add(future.get());
        }
        return results;
    }

    /** A checkpoint of one subtask: its handle and how long each part took. */
    private static final class Snapshot {
        final KeyedStateHandle handle;
        final long syncNanos;
        final long asyncNanos;

        Snapshot(KeyedStateHandle handle, long syncNanos, long asyncNanos) {
            this.handle = handle;
            this.syncNanos = syncNanos;
            this.asyncNanos = asyncNanos;
        }
    }

    /** One subtask's backend, owning {@link #owned}. */
    private final class Subtask {
        final KeyGroupRange owned;
        /** Whether the backend indexes completed checkpoints in the background (appendlog). */
        final boolean indexes;
        MetricsRecorder metrics;
        AbstractKeyedStateBackend<Integer> backend;
        int ownedKeys;

        Subtask(KeyGroupRange owned, boolean indexes) {
            this.owned = owned;
            this.indexes = indexes;
        }

        Void open(StateBackend stateBackend, List<KeyedStateHandle> handles) throws Exception {
            metrics = new MetricsRecorder();
            backend = KeyedBackends.build(stateBackend, OPERATOR, IntSerializer.INSTANCE, owned, metrics, handles);
            return null;
        }

        /** Writes version {@code version} of its keys: all of them for 0, every tenth after. */
        Void write(int keys, int version) throws Exception {
            ValueState<byte[]> values = values();
            int written = 0;
            for (int key = 0; key < keys; key += version == 0 ? 1 : REWRITE_EVERY) {
                if (owns(key)) {
                    backend.setCurrentKey(key);
                    values.update(value(key, version));
                    written++;
                }
            }
            if (version == 0) {
                ownedKeys = written;
            }
            return null;
        }

        Snapshot checkpoint(long id, CheckpointStreamFactory streams) throws Exception {
            long start = System.nanoTime();
            RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                    backend.snapshot(id, id, streams, CheckpointOptions.forCheckpointWithDefaultLocation());
            long sync = System.nanoTime();
            future.run();
            KeyedStateHandle handle = future.get().getJobManagerOwnedSnapshot();
            return new Snapshot(handle, sync - start, System.nanoTime() - sync);
        }

        /**
         * Completes checkpoint {@code id}; an {@code appendlog} backend then learns the batch in
         * the background, which the next checkpoint of a job would find done a second later.
         */
        Void complete(long id) throws Exception {
            backend.notifyCheckpointComplete(id);
            if (indexes) {
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
                while (metrics.value(LIVE_ENTRIES) != ownedKeys) {
                    if (System.nanoTime() > deadline) {
                        throw new IllegalStateException(
                                "the index of key groups " + owned + " did not learn checkpoint " + id
                                        + " within 120 s: " + metrics.value(LIVE_ENTRIES) + " of "
                                        + ownedKeys + " entries");
                    }
                    Thread.sleep(1);
                }
            }
            return null;
        }

        /** Checks every owned key's restored value. */
        Void verify(int keys) throws Exception {
            ValueState<byte[]> values = values();
            for (int key = 0; key < keys; key++) {
                if (owns(key)) {
                    backend.setCurrentKey(key);
                    byte[] expected = value(key, key % REWRITE_EVERY == 0 ? 1 : 0);
                    if (!Arrays.equals(expected, values.value())) {
                        throw new IllegalStateException(
                                "key " + key + " restored in key groups " + owned + " is not its last value");
                    }
                }
            }
            return null;
        }

        Void dispose() {
            if (backend != null) {
                backend.dispose();
                backend = null;
            }
            return null;
        }

        private boolean owns(int key) {
            return owned.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, 128));
        }

        private ValueState<byte[]> values() throws Exception {
            return backend.getPartitionedState(
                    VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
        }
    }
}
