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

package org.appendlog.statebackend.faults;

import org.appendlog.statebackend.AppendLogKeyedStateBackend;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendHarness;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;

import java.io.IOException;
import java.net.URI;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.CancellationException;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Drives one append-log keyed backend as a task does, keeping a model of what its state must be,
 * so that every restore can be compared with the exact expected state. Checkpoint manifests go
 * through a real {@link FsCheckpointStreamFactory} on the given directory (which may be a
 * {@code faulty://} one).
 */
final class FaultHarness implements AutoCloseable {

    static final String STATE = "values";
    static final ValueStateDescriptor<Long> VALUES =
            new ValueStateDescriptor<>(STATE, FailingLongSerializer.INSTANCE);

    /** A completed checkpoint and the state it must restore to. */
    static final class Completed {
        final long id;
        final IncrementalRemoteKeyedStateHandle handle;
        final Map<Integer, Long> state;

        Completed(long id, IncrementalRemoteKeyedStateHandle handle, Map<Integer, Long> state) {
            this.id = id;
            this.handle = handle;
            this.state = state;
        }
    }

    final AppendLogStateBackend stateBackend;
    final AppendLogKeyedStateBackend<Integer> backend;
    private final String checkpointDir;
    private final SharedStateRegistry registry = BackendHarness.newRegistry();
    private final ValueState<Long> values;
    /** What the backend holds now. */
    final Map<Integer, Long> model = new TreeMap<>();

    private FaultHarness(
            AppendLogStateBackend stateBackend,
            String checkpointDir,
            List<KeyedStateHandle> handles)
            throws Exception {
        this.stateBackend = stateBackend;
        this.checkpointDir = checkpointDir;
        this.backend = BackendHarness.build(stateBackend, handles);
        this.values =
                backend.getPartitionedState(
                        VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
    }

    static FaultHarness open(AppendLogStateBackend stateBackend, String checkpointDir)
            throws Exception {
        return new FaultHarness(stateBackend, checkpointDir, Collections.emptyList());
    }

    /** A new backend (a new task attempt) restored from {@code checkpoint}. */
    static FaultHarness restore(
            AppendLogStateBackend stateBackend, String checkpointDir, Completed checkpoint)
            throws Exception {
        FaultHarness restored =
                new FaultHarness(
                        stateBackend, checkpointDir, Collections.singletonList(checkpoint.handle));
        // As the coordinator does on restore: later checkpoints refer to the restored segments.
        restored.registry.registerAll(Collections.singletonList(checkpoint.handle), checkpoint.id);
        restored.model.putAll(checkpoint.state);
        return restored;
    }

    void put(int key, long value) throws IOException {
        backend.setCurrentKey(key);
        values.update(value);
        model.put(key, value);
    }

    void remove(int key) {
        backend.setCurrentKey(key);
        values.clear();
        model.remove(key);
    }

    /** Every key and value the backend holds. */
    Map<Integer, Long> contents() throws Exception {
        List<Integer> keys;
        try (Stream<Integer> stream = backend.getKeys(STATE, VoidNamespace.INSTANCE)) {
            keys = stream.collect(Collectors.toList());
        }
        Map<Integer, Long> contents = new TreeMap<>();
        for (int key : keys) {
            backend.setCurrentKey(key);
            contents.put(key, values.value());
        }
        return contents;
    }

    CheckpointStreamFactory streams() throws IOException {
        Path dir = new Path(checkpointDir);
        return new FsCheckpointStreamFactory(
                FileSystem.get(URI.create(checkpointDir)),
                new Path(dir, "chk"),
                new Path(dir, "shared"),
                0,
                4096);
    }

    /** Starts checkpoint {@code id}: runs the synchronous phase (which may throw). */
    RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(long id) throws Exception {
        return backend.snapshot(
                id, id, streams(), CheckpointOptions.forCheckpointWithDefaultLocation());
    }

    /** Registers and confirms checkpoint {@code id}, as the coordinator does. */
    Completed complete(long id, SnapshotResult<KeyedStateHandle> result) {
        IncrementalRemoteKeyedStateHandle handle =
                (IncrementalRemoteKeyedStateHandle) result.getJobManagerOwnedSnapshot();
        registry.registerAll(Collections.singletonList(handle), id);
        registry.unregisterUnusedState(id);
        backend.notifyCheckpointComplete(id);
        return new Completed(id, handle, new TreeMap<>(model));
    }

    /** A checkpoint that must succeed. */
    Completed checkpoint(long id) throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> future = snapshot(id);
        future.run();
        return complete(id, future.get());
    }

    /** The result of a future, or the failure's message chain. */
    static String failureOf(RunnableFuture<SnapshotResult<KeyedStateHandle>> future)
            throws InterruptedException {
        try {
            future.get();
            return null;
        } catch (CancellationException e) {
            return "cancelled";
        } catch (ExecutionException e) {
            return messages(e.getCause());
        }
    }

    /** Messages of {@code t} and its causes, joined. */
    static String messages(Throwable t) {
        StringBuilder sb = new StringBuilder();
        for (Throwable c = t; c != null; c = c.getCause()) {
            if (sb.length() > 0) {
                sb.append(" <- ");
            }
            sb.append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
        }
        return sb.toString();
    }

    /** Restores {@code checkpoint} into a new backend and asserts it holds exactly its state. */
    static void assertRestoresExactly(
            AppendLogStateBackend stateBackend, String checkpointDir, Completed checkpoint)
            throws Exception {
        try (FaultHarness restored = restore(stateBackend, checkpointDir, checkpoint)) {
            assertExactly(restored.contents(), checkpoint);
        }
    }

    /** Fails listing the differing keys (not two whole maps) unless {@code actual} is exact. */
    static void assertExactly(Map<Integer, Long> actual, Completed checkpoint) {
        Map<Integer, String> diff = new TreeMap<>();
        for (Map.Entry<Integer, Long> e : checkpoint.state.entrySet()) {
            Long got = actual.get(e.getKey());
            if (!e.getValue().equals(got)) {
                diff.put(e.getKey(), "expected " + e.getValue() + ", restored " + got);
            }
        }
        for (Integer key : actual.keySet()) {
            if (!checkpoint.state.containsKey(key)) {
                diff.put(key, "expected absent, restored " + actual.get(key));
            }
        }
        assertThat(diff).as("wrong state restored from checkpoint %d", checkpoint.id).isEmpty();
    }

    @Override
    public void close() {
        backend.dispose();
    }
}
