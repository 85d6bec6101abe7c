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

import org.appendlog.statebackend.compaction.Compactor;
import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.index.RecordsToCopy;
import org.appendlog.statebackend.index.SegmentStats;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.tracking.ChangeTracker;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CheckpointType;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.TestTaskStateManager;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

import javax.annotation.Nullable;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;
import java.lang.reflect.Proxy;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.RunnableFuture;
import java.util.function.IntFunction;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Drives one keyed backend outside a job, the way a task does: set a key, write, checkpoint,
 * register the checkpoint with a {@link SharedStateRegistry}, notify completion.
 */
public final class BackendHarness implements AutoCloseable {

    public static final ValueStateDescriptor<Long> COUNTS =
            new ValueStateDescriptor<>("counts", LongSerializer.INSTANCE);
    public static final int MAX_PARALLELISM = 128;

    private static final JobID JOB = new JobID();

    public final AppendLogKeyedStateBackend<Integer> backend;
    private final SharedStateRegistry registry;
    private final ValueState<Long> counts;

    private BackendHarness(AppendLogKeyedStateBackend<Integer> backend, SharedStateRegistry registry)
            throws Exception {
        this.backend = backend;
        this.registry = registry;
        this.counts =
                backend.getPartitionedState(
                        VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, COUNTS);
    }

    public static BackendHarness open(AppendLogStateBackend stateBackend, SharedStateRegistry registry)
            throws Exception {
        return restore(stateBackend, registry, Collections.emptyList());
    }

    /** A harness whose backend registers its metrics on {@code metrics}. */
    public static BackendHarness open(
            AppendLogStateBackend stateBackend, SharedStateRegistry registry, MetricGroup metrics)
            throws Exception {
        Environment env = new MockEnvironmentBuilder().setJobID(JOB).build();
        return new BackendHarness(
                (AppendLogKeyedStateBackend<Integer>)
                        stateBackend.createKeyedStateBackend(
                                parameters(
                                        env,
                                        Collections.emptyList(),
                                        KeyGroupRange.of(0, MAX_PARALLELISM - 1),
                                        metrics)),
                registry);
    }

    public static BackendHarness restore(
            AppendLogStateBackend stateBackend,
            SharedStateRegistry registry,
            Collection<KeyedStateHandle> handles)
            throws Exception {
        return new BackendHarness(build(stateBackend, handles), registry);
    }

    /**
     * A harness restoring {@code handles} in a task whose local state is kept as {@code
     * localRecovery} says (Flink's local backup and recovery).
     */
    public static BackendHarness restore(
            AppendLogStateBackend stateBackend,
            SharedStateRegistry registry,
            Collection<KeyedStateHandle> handles,
            LocalRecoveryConfig localRecovery)
            throws Exception {
        Environment env =
                new MockEnvironmentBuilder()
                        .setJobID(JOB)
                        .setTaskStateManager(new TestTaskStateManager(localRecovery))
                        .build();
        return new BackendHarness(
                (AppendLogKeyedStateBackend<Integer>)
                        stateBackend.createKeyedStateBackend(
                                parameters(env, handles, KeyGroupRange.of(0, MAX_PARALLELISM - 1))),
                registry);
    }

    /** A harness owning only {@code keyGroups}, as after rescaling. */
    public static BackendHarness restore(
            AppendLogStateBackend stateBackend,
            SharedStateRegistry registry,
            Collection<KeyedStateHandle> handles,
            KeyGroupRange keyGroups)
            throws Exception {
        return new BackendHarness(build(stateBackend, handles, keyGroups), registry);
    }

    public static AppendLogKeyedStateBackend<Integer> build(
            AppendLogStateBackend stateBackend, Collection<KeyedStateHandle> handles)
            throws IOException {
        return build(stateBackend, handles, KeyGroupRange.of(0, MAX_PARALLELISM - 1));
    }

    /** A backend owning only {@code keyGroups}, as after rescaling. */
    public static AppendLogKeyedStateBackend<Integer> build(
            AppendLogStateBackend stateBackend,
            Collection<KeyedStateHandle> handles,
            KeyGroupRange keyGroups)
            throws IOException {
        return (AppendLogKeyedStateBackend<Integer>)
                stateBackend.createKeyedStateBackend(parameters(handles, keyGroups));
    }

    /**
     * A backend of task attempt {@code attempt}, whose execution graph tells the job run it
     * belongs to; the other builds are each an attempt of a run of its own.
     */
    public static AppendLogKeyedStateBackend<Integer> build(
            AppendLogStateBackend stateBackend,
            Collection<KeyedStateHandle> handles,
            ExecutionAttemptID attempt)
            throws IOException {
        Environment mock = new MockEnvironmentBuilder().setJobID(JOB).build();
        Environment env =
                (Environment)
                        Proxy.newProxyInstance(
                                Environment.class.getClassLoader(),
                                new Class<?>[] {Environment.class},
                                (proxy, method, args) -> {
                                    if (method.getName().equals("getExecutionId")) {
                                        return attempt;
                                    }
                                    try {
                                        return method.invoke(mock, args);
                                    } catch (InvocationTargetException e) {
                                        throw e.getCause();
                                    }
                                });
        return (AppendLogKeyedStateBackend<Integer>)
                stateBackend.createKeyedStateBackend(
                        parameters(env, handles, KeyGroupRange.of(0, MAX_PARALLELISM - 1)));
    }

    /** What a task of the harness's job passes to any state backend to build a keyed backend. */
    public static KeyedStateBackendParametersImpl<Integer> parameters(
            Collection<KeyedStateHandle> handles, KeyGroupRange keyGroups) {
        return parameters(new MockEnvironmentBuilder().setJobID(JOB).build(), handles, keyGroups);
    }

    private static KeyedStateBackendParametersImpl<Integer> parameters(
            Environment env, Collection<KeyedStateHandle> handles, KeyGroupRange keyGroups) {
        return parameters(env, handles, keyGroups, new UnregisteredMetricsGroup());
    }

    private static KeyedStateBackendParametersImpl<Integer> parameters(
            Environment env,
            Collection<KeyedStateHandle> handles,
            KeyGroupRange keyGroups,
            MetricGroup metrics) {
        return new KeyedStateBackendParametersImpl<>(
                env,
                JOB,
                "counter",
                IntSerializer.INSTANCE,
                MAX_PARALLELISM,
                keyGroups,
                env.getTaskKvStateRegistry(),
                TtlTimeProvider.DEFAULT,
                metrics,
                handles,
                new CloseableRegistry());
    }

    public static SharedStateRegistry newRegistry() {
        return new SharedStateRegistryImpl();
    }

    public void put(int key, long value) throws IOException {
        backend.setCurrentKey(key);
        counts.update(value);
    }

    public void remove(int key) {
        backend.setCurrentKey(key);
        counts.clear();
    }

    public Long get(int key) throws IOException {
        backend.setCurrentKey(key);
        return counts.value();
    }

    // The backend's package-private hooks, for the tests of the other packages.

    public ChangeTracker changeTracker() {
        return backend.changeTracker();
    }

    public LogIndex index() {
        return backend.index();
    }

    /** Record bytes that the restore of the backend read. */
    public long restoredBytes() {
        return backend.restoredBytes();
    }

    /** Checkpoints that appended every live entry instead of the changes. */
    public long fullBatches() {
        return backend.fullBatches();
    }

    /** Whether a compaction result, or a full checkpoint, waits for the next checkpoint. */
    public boolean compactionWaits() {
        return backend.compactionWaits();
    }

    /** The compactor, or null when compaction is disabled. */
    @Nullable
    public Compactor compactor() {
        return backend.compactor();
    }

    /** Runs the synchronous part of checkpoint {@code id}; the future is its asynchronous part. */
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(long id) throws Exception {
        return snapshot(backend, id);
    }

    /** Likewise, the asynchronous part writing its streams (the manifest) through {@code streams}. */
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(
            long id, CheckpointStreamFactory streams) throws Exception {
        return backend.snapshot(
                id, id, streams, CheckpointOptions.forCheckpointWithDefaultLocation());
    }

    /** Runs the synchronous part of checkpoint {@code id} of {@code backend}, in memory. */
    public static RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(
            AppendLogKeyedStateBackend<?> backend, long id) throws Exception {
        return backend.snapshot(
                id,
                id,
                new MemCheckpointStreamFactory(Integer.MAX_VALUE),
                CheckpointOptions.forCheckpointWithDefaultLocation());
    }

    /** Takes checkpoint {@code id}, registers it and confirms it, as the coordinator would. */
    public IncrementalRemoteKeyedStateHandle checkpoint(long id) throws Exception {
        IncrementalRemoteKeyedStateHandle handle = checkpointThatNeverCompletes(id);
        confirm(handle, id);
        return handle;
    }

    /**
     * Takes checkpoint {@code id} as a full checkpoint (Flink's {@code FULL_CHECKPOINT} type: every
     * live entry, no earlier batch), registers it and confirms it.
     */
    public IncrementalRemoteKeyedStateHandle fullCheckpoint(long id) throws Exception {
        IncrementalRemoteKeyedStateHandle handle =
                written(
                        backend.snapshot(
                                id,
                                id,
                                new MemCheckpointStreamFactory(Integer.MAX_VALUE),
                                new CheckpointOptions(
                                        CheckpointType.FULL_CHECKPOINT,
                                        CheckpointStorageLocationReference.getDefault())));
        confirm(handle, id);
        return handle;
    }

    /** Registers checkpoint {@code id}'s handle and confirms it, as the coordinator would. */
    public void confirm(IncrementalRemoteKeyedStateHandle handle, long id) {
        acknowledge(handle, id);
        complete(id);
    }

    /** Registers checkpoint {@code id}'s handle, as the coordinator does when the task acknowledges it. */
    public void acknowledge(IncrementalRemoteKeyedStateHandle handle, long id) {
        registry.registerAll(Collections.singletonList(handle), id);
    }

    /** Completes acknowledged checkpoint {@code id}, as the coordinator would. */
    public void complete(long id) {
        // Only the latest checkpoint is retained: what older ones alone referred to goes.
        registry.unregisterUnusedState(id);
        backend.notifyCheckpointComplete(id);
    }

    /** Takes checkpoint {@code id} but never completes it (the job fails before it does). */
    public IncrementalRemoteKeyedStateHandle checkpointThatNeverCompletes(long id)
            throws Exception {
        return written(snapshot(id));
    }

    /** Runs a checkpoint's asynchronous phase; returns the handle the task would send. */
    public static IncrementalRemoteKeyedStateHandle written(
            RunnableFuture<SnapshotResult<KeyedStateHandle>> asyncPhase) throws Exception {
        asyncPhase.run();
        return (IncrementalRemoteKeyedStateHandle) asyncPhase.get().getJobManagerOwnedSnapshot();
    }

    /**
     * Restores {@code handle} and checks that it holds exactly keys 0 to {@code keys - 1} as
     * expected (null: absent); returns the bytes the restore read.
     */
    public static long assertRestores(
            AppendLogStateBackend stateBackend,
            SharedStateRegistry registry,
            IncrementalRemoteKeyedStateHandle handle,
            int keys,
            IntFunction<Long> expected)
            throws Exception {
        try (BackendHarness restored = restore(stateBackend, registry, Collections.singletonList(handle))) {
            int present = 0;
            for (int key = 0; key < keys; key++) {
                Long value = expected.apply(key);
                assertThat(restored.get(key)).as("key %d", key).isEqualTo(value);
                present += value == null ? 0 : 1;
            }
            assertThat(restored.backend.numKeyValueStateEntries()).isEqualTo(present);
            return restored.backend.restoredBytes();
        }
    }

    /**
     * Checks that the index this backend keeps as it runs describes the log of its last completed
     * checkpoint as the index that a restore of it builds does: the same entries, and per segment
     * the same bytes of latest records. Compaction judges liveness by it. The index follows a
     * run's entries as soon as the run is taken, ahead of the log: while a run or a full
     * checkpoint waits for the next checkpoint, checkpoints without changes follow {@code last}
     * until none does. Returns the last completed checkpoint.
     */
    public IncrementalRemoteKeyedStateHandle assertIndexDescribesTheLog(
            AppendLogStateBackend stateBackend, IncrementalRemoteKeyedStateHandle last)
            throws Exception {
        IncrementalRemoteKeyedStateHandle handle = last;
        awaitCompaction();
        // Without changes, compaction settles within a few passes; a pass after every checkpoint
        // copies records the index takes for dead, again and again.
        for (int idle = 0; backend.compactionWaits(); idle++) {
            assertThat(idle)
                    .as("checkpoints without changes, each with a compaction result")
                    .isLessThan(10);
            handle = checkpoint(handle.getCheckpointId() + 1);
            awaitCompaction();
        }
        backend.index().awaitUpdates();
        try (BackendHarness restored =
                restore(stateBackend, registry, Collections.singletonList(handle))) {
            assertThat(liveBytesBySegment(backend.index()))
                    .isEqualTo(liveBytesBySegment(restored.backend.index()));
            assertThat(backend.index().liveEntries())
                    .isEqualTo(restored.backend.index().liveEntries());
            List<BatchLocation> log = backend.baseBatches();
            List<String> records = liveRecords(backend, log);
            assertThat(records).hasSize((int) backend.index().liveEntries());
            assertThat(records).isEqualTo(liveRecords(restored.backend, log));
        }
        return handle;
    }

    /**
     * Where the index places every live entry's latest record in {@code log} (key group, batch,
     * position, length), sorted: each position names one record, so two indexes that list the
     * same places agree entry by entry.
     */
    private static List<String> liveRecords(
            AppendLogKeyedStateBackend<?> backend, List<BatchLocation> log) {
        LogIndex index = backend.index();
        RecordsToCopy live = new RecordsToCopy();
        index.collectLive(backend.getKeyGroupRange(), index.compactedBatches(log), live);
        List<String> records = new ArrayList<>();
        for (int i = 0; i < live.size(); i++) {
            records.add(
                    live.keyGroup(i)
                            + " "
                            + log.get(live.batch(i)).key()
                            + " @"
                            + live.position(i)
                            + " "
                            + live.length(i));
        }
        Collections.sort(records);
        return records;
    }

    private static Map<String, Long> liveBytesBySegment(LogIndex index) {
        return index.segments().stream()
                .filter(s -> s.liveBytes() != 0)
                .collect(Collectors.toMap(SegmentStats::segment, SegmentStats::liveBytes));
    }

    /** Waits until no compaction pass is running. */
    public void awaitCompaction() throws InterruptedException {
        awaitCompaction(backend);
    }

    /** Waits until no compaction pass of {@code backend} is running. */
    public static void awaitCompaction(AppendLogKeyedStateBackend<?> backend)
            throws InterruptedException {
        while (backend.compactor() != null && backend.compactor().isRunning()) {
            Thread.sleep(5);
        }
    }

    /** Compaction passes of {@code backend} that finished. */
    public static long compactionPasses(AppendLogKeyedStateBackend<?> backend) {
        return backend.compactor() == null ? 0 : backend.compactor().passes();
    }

    @Override
    public void close() {
        backend.dispose();
    }
}
