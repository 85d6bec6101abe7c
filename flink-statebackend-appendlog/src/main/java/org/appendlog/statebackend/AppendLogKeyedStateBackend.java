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

import org.appendlog.statebackend.compaction.CompactionInput;
import org.appendlog.statebackend.compaction.CompactionSettings;
import org.appendlog.statebackend.compaction.Compactor;
import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.index.SegmentStats;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.SegmentedLog;
import org.appendlog.statebackend.metrics.AppendLogMetrics;
import org.appendlog.statebackend.metrics.SuppliedCounter;
import org.appendlog.statebackend.restore.AppendLogRestoreResult;
import org.appendlog.statebackend.snapshot.AppendLogSnapshotStrategy;
import org.appendlog.statebackend.snapshot.CheckpointLineage;
import org.appendlog.statebackend.tracking.ChangeTracker;
import org.appendlog.statebackend.tracking.LoggedState;
import org.appendlog.statebackend.tracking.LoggedTimers;

import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.state.State;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.query.TaskKvStateRegistry;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.runtime.state.KeyedStateFunction;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PriorityComparable;
import org.apache.flink.runtime.state.SavepointResources;
import org.apache.flink.runtime.state.SnapshotExecutionType;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategyRunner;
import org.apache.flink.runtime.state.StateSnapshotTransformer.StateSnapshotTransformFactory;
import org.apache.flink.runtime.state.StreamCompressionDecorator;
import org.apache.flink.runtime.state.heap.HeapKeyedStateBackend;
import org.apache.flink.runtime.state.heap.HeapPriorityQueueElement;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.util.IOUtils;
import org.apache.flink.util.concurrent.ExecutorThreadFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nonnull;
import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * The append-log keyed state backend: working state lives in a {@link HeapKeyedStateBackend} (so
 * reads and writes are as fast as {@code hashmap}); every state is handed out wrapped, so writes
 * reach the {@link ChangeTracker}; checkpoints append the changed entries to the {@link
 * SegmentedLog}. Canonical savepoints are the heap backend's own.
 */
public class AppendLogKeyedStateBackend<K> extends AbstractKeyedStateBackend<K> {

    private static final Logger LOG = LoggerFactory.getLogger(AppendLogKeyedStateBackend.class);

    private final HeapKeyedStateBackend<K> heap;
    private final ChangeTracker tracker;
    private final List<LoggedState<K>> states = new ArrayList<>();
    private final Map<String, LoggedState<K>> statesByName = new HashMap<>();
    private final List<LoggedTimers> timers = new ArrayList<>();
    private final Map<String, LoggedTimers> timersByName = new HashMap<>();
    private final SegmentedLog log;
    private final LogIndex index;
    private final CheckpointLineage lineage;
    private final AppendLogSnapshotStrategy<K> snapshotStrategy;
    @Nullable private final Compactor compactor;
    /** Deduplicates buffered changes and indexes written batches, off the task's critical path. */
    private final ExecutorService background;
    private volatile long restoredBytes;
    private volatile long restoreIndexMillis;
    private volatile int restoreLocalSegments;

    AppendLogKeyedStateBackend(
            HeapKeyedStateBackend<K> heap,
            TaskKvStateRegistry kvStateRegistry,
            ClassLoader userCodeClassLoader,
            ExecutionConfig executionConfig,
            TtlTimeProvider ttlTimeProvider,
            LatencyTrackingStateConfig latencyTrackingStateConfig,
            StreamCompressionDecorator compressionDecorator,
            SegmentedLog log,
            LogIndex index,
            UUID backendId,
            CompactionSettings compaction,
            long changeBufferSize,
            double fullCheckpointRatio,
            boolean localBackup,
            MetricGroup metricGroup) {
        super(
                kvStateRegistry,
                heap.getKeySerializer(),
                userCodeClassLoader,
                executionConfig,
                ttlTimeProvider,
                latencyTrackingStateConfig,
                new CloseableRegistry(),
                compressionDecorator,
                heap.getKeyContext());
        this.heap = heap;
        this.background =
                Executors.newSingleThreadExecutor(
                        new ExecutorThreadFactory(
                                "appendlog-background " + keyGroupRange,
                                (thread, e) ->
                                        LOG.warn("Background work of the state log failed", e)));
        this.tracker = new ChangeTracker(heap.getKeyContext(), changeBufferSize, background);
        this.log = log;
        this.index = index;
        this.lineage = new CheckpointLineage(log, index, background);
        this.snapshotStrategy =
                new AppendLogSnapshotStrategy<>(
                        backendId,
                        keyGroupRange,
                        heap.getKeySerializer(),
                        states,
                        timers,
                        tracker,
                        log,
                        lineage,
                        background,
                        fullCheckpointRatio,
                        localBackup);
        MetricGroup metrics = metricGroup.addGroup(AppendLogMetrics.GROUP);
        this.compactor =
                compaction.enabled()
                        ? new Compactor(
                                compaction,
                                log,
                                index,
                                keyGroupRange,
                                lineage::offerCompaction,
                                metrics)
                        : null;
        registerMetrics(metrics);
    }

    /**
     * Called once after restore: later checkpoints build on {@code batches}; if the state came in
     * another format ({@code needsFull}), checkpoints are full until one of them completes.
     */
    void startFrom(AppendLogRestoreResult restored) {
        lineage.startFrom(restored.batches(), restored.needsFullCheckpoint());
        this.restoredBytes = restored.bytesRead();
        this.restoreIndexMillis = restored.indexMillis();
        this.restoreLocalSegments = restored.localSegments();
    }

    @VisibleForTesting
    ChangeTracker changeTracker() {
        return tracker;
    }

    /** Record bytes that the restore of this backend read. */
    long restoredBytes() {
        return restoredBytes;
    }

    /** Checkpoints that appended every live entry instead of the changes. */
    long fullBatches() {
        return snapshotStrategy.fullBatches();
    }

    LogIndex index() {
        return index;
    }

    /** The batches of the last completed checkpoint, which the index describes. */
    List<BatchLocation> baseBatches() {
        return lineage.baseBatches();
    }

    /** Whether a compaction result, or a full checkpoint, waits for the next checkpoint. */
    boolean compactionWaits() {
        return !lineage.mayCompact();
    }

    /** The compactor, or null when compaction is disabled. */
    Compactor compactor() {
        return compactor;
    }

    private void registerMetrics(MetricGroup group) {
        group.gauge(AppendLogMetrics.LIVE_BYTES, index::liveBytes);
        group.gauge(AppendLogMetrics.DIRTY_RATIO, () -> SegmentStats.dirtyRatio(index.segments()));
        group.gauge(AppendLogMetrics.RESTORE_BYTES_READ, () -> restoredBytes);
        group.gauge(AppendLogMetrics.RESTORE_INDEX_MILLIS, () -> restoreIndexMillis);
        group.gauge(AppendLogMetrics.RESTORE_LOCAL_SEGMENTS, () -> restoreLocalSegments);
        group.gauge(AppendLogMetrics.TOTAL_BYTES, index::totalBytes);
        group.gauge(AppendLogMetrics.LIVE_ENTRIES, index::liveEntries);
        group.counter(AppendLogMetrics.BYTES_APPENDED, new SuppliedCounter(log::bytesAppended));
        group.counter(AppendLogMetrics.FULL_BATCHES, new SuppliedCounter(this::fullBatches));
        group.gauge(AppendLogMetrics.DIRTY_ENTRIES, tracker::size);
        group.counter(
                AppendLogMetrics.UNTRACKED_INTERVALS,
                new SuppliedCounter(tracker::untrackedIntervals));
        group.gauge(AppendLogMetrics.INDEX_HEAP_BYTES, index::heapBytes);
        group.gauge(AppendLogMetrics.CHANGE_BUFFER_BYTES, tracker::bufferedBytes);
        group.gauge(AppendLogMetrics.CHANGE_BUFFER_HEAP_BYTES, tracker::bufferHeapBytes);
        group.gauge(AppendLogMetrics.SEGMENT_COUNT, index::segmentCount);
        group.gauge(
                AppendLogMetrics.COMPACTION_STOPPED,
                () -> compactor != null && index.missedUpdate() ? 1 : 0);
    }

    @Nonnull
    @Override
    public <N, SV, SEV, S extends State, IS extends S> IS createOrUpdateInternalState(
            @Nonnull TypeSerializer<N> namespaceSerializer,
            @Nonnull StateDescriptor<S, SV> stateDesc,
            @Nonnull StateSnapshotTransformFactory<SEV> snapshotTransformFactory)
            throws Exception {
        return createOrUpdateInternalState(
                namespaceSerializer, stateDesc, snapshotTransformFactory, false);
    }

    @Nonnull
    @Override
    @SuppressWarnings("unchecked")
    public <N, SV, SEV, S extends State, IS extends S> IS createOrUpdateInternalState(
            @Nonnull TypeSerializer<N> namespaceSerializer,
            @Nonnull StateDescriptor<S, SV> stateDesc,
            @Nonnull StateSnapshotTransformFactory<SEV> snapshotTransformFactory,
            boolean allowFutureMetadataUpdates)
            throws Exception {
        LoggedState<K> state = statesByName.get(stateDesc.getName());
        // The serializers the log's records of this state were written with.
        TypeSerializer<?> namespacesBefore =
                state == null ? null : state.table().getNamespaceSerializer();
        TypeSerializer<?> valuesBefore = state == null ? null : state.table().getStateSerializer();
        InternalKvState<K, N, SV> heapState =
                heap.createOrUpdateInternalState(
                        namespaceSerializer,
                        stateDesc,
                        snapshotTransformFactory,
                        allowFutureMetadataUpdates);
        if (state == null) {
            state =
                    LoggedState.track(
                            states.size(), stateDesc, heapState, tracker, keyContext);
            states.add(state);
            statesByName.put(stateDesc.getName(), state);
        } else {
            state.update(heapState, stateDesc);
            if (!sameFormat(namespacesBefore, state.table().getNamespaceSerializer())
                    || !sameFormat(valuesBefore, state.table().getStateSerializer())) {
                // The heap migrated its objects, but the log still holds the old format, which
                // the next manifest's serializers could not read.
                lineage.requireFullCheckpoint();
            }
        }
        return (IS) state.tracked();
    }

    /** Whether {@code after} reads what {@code before} wrote as it is. */
    @SuppressWarnings("unchecked")
    private static boolean sameFormat(TypeSerializer<?> before, TypeSerializer<?> after) {
        if (before == after) {
            return true;
        }
        TypeSerializerSnapshot<Object> old =
                (TypeSerializerSnapshot<Object>) before.snapshotConfiguration();
        TypeSerializerSnapshot<Object> now =
                (TypeSerializerSnapshot<Object>) after.snapshotConfiguration();
        return now.resolveSchemaCompatibility(old).isCompatibleAsIs();
    }

    @Nonnull
    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(
                    @Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer) {
        return create(stateName, byteOrderedElementSerializer, false);
    }

    @Override
    public <T extends HeapPriorityQueueElement & PriorityComparable<? super T> & Keyed<?>>
            KeyGroupedInternalPriorityQueue<T> create(
                    @Nonnull String stateName,
                    @Nonnull TypeSerializer<T> byteOrderedElementSerializer,
                    boolean allowFutureMetadataUpdates) {
        KeyGroupedInternalPriorityQueue<T> queue =
                heap.create(stateName, byteOrderedElementSerializer, allowFutureMetadataUpdates);
        LoggedTimers logged = timersByName.get(stateName);
        if (logged == null) {
            logged = new LoggedTimers(stateName, queue, byteOrderedElementSerializer);
            timers.add(logged);
            timersByName.put(stateName, logged);
        } else {
            logged.updateSerializer(byteOrderedElementSerializer);
        }
        return queue;
    }

    Map<String, LoggedState<K>> statesByName() {
        return statesByName;
    }

    @Override
    public <N> Stream<K> getKeys(String state, N namespace) {
        return heap.getKeys(state, namespace);
    }

    @Override
    public <N> Stream<K> getKeys(List<String> states, N namespace) {
        return heap.getKeys(states, namespace);
    }

    @Override
    public <N> Stream<Tuple2<K, N>> getKeysAndNamespaces(String state) {
        return heap.getKeysAndNamespaces(state);
    }

    /** Like hashmap: the keys are copied first, since the function may remove entries. */
    @Override
    public <N, S extends State, T> void applyToAllKeys(
            N namespace,
            TypeSerializer<N> namespaceSerializer,
            StateDescriptor<S, T> stateDescriptor,
            KeyedStateFunction<K, S> function,
            PartitionStateFactory partitionStateFactory)
            throws Exception {
        List<K> keys;
        try (Stream<K> keyStream = getKeys(stateDescriptor.getName(), namespace)) {
            keys = keyStream.collect(Collectors.toList());
        }
        S state = partitionStateFactory.get(namespace, namespaceSerializer, stateDescriptor);
        for (K key : keys) {
            setCurrentKey(key);
            function.process(key, state);
        }
    }

    @Override
    public int numKeyValueStateEntries() {
        return heap.numKeyValueStateEntries();
    }

    @Nonnull
    @Override
    public RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot(
            long checkpointId,
            long timestamp,
            @Nonnull CheckpointStreamFactory streamFactory,
            @Nonnull CheckpointOptions checkpointOptions)
            throws Exception {
        return new SnapshotStrategyRunner<>(
                        "AppendLog checkpoint",
                        snapshotStrategy.forCheckpoint(
                                checkpointOptions.getCheckpointType().getSharingFilesStrategy()),
                        cancelStreamRegistry,
                        SnapshotExecutionType.ASYNCHRONOUS)
                .snapshot(checkpointId, timestamp, streamFactory, checkpointOptions);
    }

    @Nonnull
    @Override
    public SavepointResources<K> savepoint() throws Exception {
        return heap.savepoint();
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        lineage.notifyCheckpointComplete(checkpointId);
        if (compactor != null
                && !compactor.isRunning()
                && lineage.mayCompact()) {
            compactor.maybeStart(compactionInput());
        }
    }

    /** Taken on the task thread, where states are registered. */
    private CompactionInput compactionInput() {
        Map<String, Integer> ids = new HashMap<>();
        List<String> names = new ArrayList<>();
        for (LoggedState<K> state : states) {
            ids.put(state.name(), state.id());
            names.add(state.name());
        }
        return new CompactionInput(lineage.baseBatches(), ids, names);
    }

    @Override
    public void notifyCheckpointAborted(long checkpointId) {
        lineage.notifyCheckpointAborted(checkpointId);
    }

    /** The sweep of orphaned log files after the restore: how many it deleted. */
    public CompletableFuture<Integer> orphanSweep() {
        return log.orphanSweep();
    }

    @Override
    public void dispose() {
        if (compactor != null) {
            compactor.close();
        }
        background.shutdownNow();
        super.dispose();
        heap.dispose();
        // The heap backend drops its tables; so does this one, so that a disposed backend that is
        // still referenced (a task's field until the next attempt builds its own) holds no state.
        states.clear();
        statesByName.clear();
        IOUtils.closeQuietly(log);
    }

    @Override
    public String toString() {
        return "AppendLogKeyedStateBackend{log=" + log.directory() + "}";
    }
}
