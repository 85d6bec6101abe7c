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

package org.appendlog.statebackend.restore;

import org.appendlog.statebackend.index.IndexRebuild;
import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.CorruptLogException;
import org.appendlog.statebackend.log.LocalLogCopy;
import org.appendlog.statebackend.log.LogScanner;
import org.appendlog.statebackend.log.LogScanner.Batch;
import org.appendlog.statebackend.log.RecordCursor;
import org.appendlog.statebackend.log.SegmentedLog;
import org.appendlog.statebackend.snapshot.TimerFormat;
import org.appendlog.statebackend.tracking.LoggedState;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot.BackendStateType;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Rebuilds heap state from the log: reads the batches of the restored checkpoints, only the key
 * groups this backend owns, applies each entry's latest record per key group (by checkpoint id; a
 * tombstone deletes) and rebuilds the index. The owned key groups are split into contiguous
 * slices read by parallel threads. It restores the timers too, gives the log the handles of the
 * restored segments, and judges whether the first checkpoint must be full.
 */
public final class AppendLogRestoreOperation<K> {

    private static final Logger LOG = LoggerFactory.getLogger(AppendLogRestoreOperation.class);

    private final RestoreHandles handles;
    private final List<RestoredCheckpoint> checkpoints;
    private final KeyGroupRange owned;
    private final int numberOfKeyGroups;
    private final Map<String, LoggedState<K>> states;
    /** The states of all handles ({@link RestoreHandles#mergedMeta}), registered already. */
    private final List<StateMetaInfoSnapshot> restoredMeta;
    /** The priority queues registered for the {@link #restoredMeta}, in their order. */
    private final List<KeyGroupedInternalPriorityQueue<?>> queues;
    private final TypeSerializer<K> keySerializer;
    private final SegmentedLog log;
    private final LogIndex index;
    private final int parallelism;

    public AppendLogRestoreOperation(
            RestoreHandles handles,
            KeyGroupRange owned,
            int numberOfKeyGroups,
            Map<String, LoggedState<K>> states,
            List<StateMetaInfoSnapshot> restoredMeta,
            List<KeyGroupedInternalPriorityQueue<?>> queues,
            TypeSerializer<K> keySerializer,
            SegmentedLog log,
            LogIndex index,
            int parallelism) {
        this.handles = handles;
        this.checkpoints = handles.checkpoints();
        this.owned = owned;
        this.numberOfKeyGroups = numberOfKeyGroups;
        this.states = states;
        this.restoredMeta = restoredMeta;
        this.queues = queues;
        this.keySerializer = keySerializer;
        this.log = log;
        this.index = index;
        this.parallelism = parallelism;
    }

    /**
     * Restores the state and timers of the append-log checkpoints; the heap backend restored
     * those in Flink's format already. Checkpoints are full until one completes after a restore
     * of Flink's format, of a native savepoint (its segments are its own private files, deleted
     * with it and addressed relative to it: no checkpoint may share them), or of merged handles
     * (their batches may hold stale records of key groups that other handles spoke for, which
     * this backend's handles would list).
     */
    public AppendLogRestoreResult restore() throws Exception {
        if (checkpoints.isEmpty()) {
            return new AppendLogRestoreResult(
                    List.of(), !handles.flinkFormat().isEmpty(), 0, 0, 0);
        }
        long[] readAndIndexed = restoreState();
        List<BatchLocation> batches = new ArrayList<>(batchesOf(checkpoints));
        for (RestoredCheckpoint checkpoint : checkpoints) {
            restoreTimers(checkpoint);
            checkpoint.segments().forEach(log::adopt);
        }
        boolean merged = checkpoints.stream().anyMatch(c -> c.isPartialFor(owned));
        boolean needsFull = handles.hasNativeSavepoint() || merged;
        LocalLogCopy localCopy = log.localCopy();
        if (localCopy != null && !needsFull) {
            // Later checkpoints list the restored segments: the local copy needs them too.
            for (RestoredCheckpoint checkpoint : checkpoints) {
                checkpoint.localCopies().forEach(localCopy::adopt);
                Map<String, StreamStateHandle> remoteOnly = new LinkedHashMap<>(checkpoint.segments());
                remoteOnly.keySet().removeAll(checkpoint.localCopies().keySet());
                if (!remoteOnly.isEmpty()) {
                    localCopy.fetch(remoteOnly);
                }
            }
        }
        return new AppendLogRestoreResult(
                batches,
                needsFull,
                readAndIndexed[0],
                readAndIndexed[1] / 1_000_000,
                localSegments());
    }

    /** Segments the restore reads from their task-local copies. */
    private int localSegments() {
        return checkpoints.stream().mapToInt(c -> c.localCopies.size()).sum();
    }

    /** Every batch the checkpoints list, each once, in their order. */
    private static List<BatchLocation> batchesOf(List<RestoredCheckpoint> checkpoints) {
        Map<String, BatchLocation> all = new LinkedHashMap<>();
        for (RestoredCheckpoint checkpoint : checkpoints) {
            for (BatchLocation batch : checkpoint.manifest.batches()) {
                all.putIfAbsent(batch.key(), batch);
            }
        }
        return new ArrayList<>(all.values());
    }

    /**
     * Restores the entries of the owned key groups; returns the record bytes read and the
     * nanoseconds the slices spent rebuilding the index, summed over the slices.
     */
    private long[] restoreState() throws Exception {
        long start = System.nanoTime();
        Set<String> counted = new HashSet<>();
        List<Batch> batches = new ArrayList<>();
        for (RestoredCheckpoint checkpoint : checkpoints) {
            // A handle speaks only for its own key groups: after a rescale, another subtask may
            // have deleted entries of its key groups that this handle's batches still hold.
            KeyGroupRange speaksFor = checkpoint.keyGroups.getIntersection(owned);
            if (speaksFor.getNumberOfKeyGroups() == 0) {
                continue;
            }
            for (Batch batch :
                    LogScanner.openBatches(
                            checkpoint.manifest.batchesFor(speaksFor), checkpoint::readFrom)) {
                batches.add(batch.restrictedTo(speaksFor));
                if (counted.add(batch.location().key())) {
                    index.batchAdded(batch.location().segment(), batch.location().rawLength());
                }
            }
        }
        List<long[]> perSlice =
                LogScanner.forEachSlice(
                        owned,
                        parallelism,
                        "appendlog-restore " + owned,
                        slice -> restoreSlice(slice, batches));
        long bytesRead = perSlice.stream().mapToLong(s -> s[0]).sum();
        long indexNanos = perSlice.stream().mapToLong(s -> s[1]).sum();
        LOG.info(
                "Restored key groups {} from {} batches ({} bytes of records, {} threads; {} of"
                        + " {} segments read from task-local copies) in {} ms, of which the"
                        + " threads spent {} ms rebuilding the index",
                owned,
                batches.size(),
                bytesRead,
                parallelism,
                localSegments(),
                checkpoints.stream().mapToInt(c -> c.segments.size()).sum(),
                (System.nanoTime() - start) / 1_000_000,
                indexNanos / 1_000_000);
        return new long[] {bytesRead, indexNanos};
    }

    /** Restores {@code checkpoint}'s timers into the queues registered for their states. */
    private void restoreTimers(RestoredCheckpoint checkpoint) throws IOException {
        List<TypeSerializer<?>> serializers = new ArrayList<>();
        List<KeyGroupedInternalPriorityQueue<?>> queuesOfCheckpoint = new ArrayList<>();
        for (StateMetaInfoSnapshot meta :
                checkpoint.manifest().metadata().getStateMetaInfoSnapshots()) {
            if (meta.getBackendStateType() != BackendStateType.PRIORITY_QUEUE) {
                continue;
            }
            int position = 0;
            for (StateMetaInfoSnapshot known : restoredMeta) {
                if (known.getBackendStateType() == BackendStateType.PRIORITY_QUEUE) {
                    if (known.getName().equals(meta.getName())) {
                        break;
                    }
                    position++;
                }
            }
            serializers.add(
                    new RegisteredPriorityQueueStateBackendMetaInfo<>(meta).getElementSerializer());
            queuesOfCheckpoint.add(queues.get(position));
        }
        TimerFormat.restore(
                checkpoint.manifest().timers(),
                checkpoint.manifest().version(),
                serializers,
                queuesOfCheckpoint,
                owned,
                numberOfKeyGroups);
    }

    /** Restores one slice; returns its record bytes read and its nanoseconds spent indexing. */
    private long[] restoreSlice(KeyGroupRange slice, List<Batch> batches) throws Exception {
        SliceRecords records = new SliceRecords(slice);
        long bytes =
                LogScanner.read(
                        batches,
                        slice,
                        LogScanner.ReadGate.NONE,
                        records::add);
        SliceRestore restore;
        try (IndexRebuild rebuild = index.rebuild()) {
            restore = new SliceRestore(rebuild);
            for (int kg = slice.getStartKeyGroup(); kg <= slice.getEndKeyGroup(); kg++) {
                int keyGroup = kg;
                records.visitNewestFirst(
                        kg, (batch, record) -> restore.apply(keyGroup, batch, record));
                long start = System.nanoTime();
                rebuild.keyGroupDone(kg);
                restore.indexNanos += System.nanoTime() - start;
            }
        }
        return new long[] {bytes, restore.indexNanos};
    }

    /**
     * Applies one slice's records, newest first: only an entry's first record reaches the heap,
     * so dead records are neither deserialized nor put. Serializers are duplicated per slice
     * (they are not thread-safe); a batch's states and segment and batch numbers are looked up
     * once.
     */
    private final class SliceRestore {
        private final IndexRebuild rebuild;
        private final TypeSerializer<K> key = keySerializer.duplicate();
        private final Map<String, TypeSerializer<Object>> namespaces = new HashMap<>();
        private final Map<String, TypeSerializer<Object>> values = new HashMap<>();
        private final DataInputDeserializer in = new DataInputDeserializer();
        private final Map<Batch, List<LoggedState<K>>> statesOfBatch = new IdentityHashMap<>();
        private Batch batch;
        private List<LoggedState<K>> statesOf;
        private int segment;
        private int batchNumber;
        /** Time in the index's calls alone, the restore's share that a metric reports. */
        private long indexNanos;

        SliceRestore(IndexRebuild rebuild) {
            this.rebuild = rebuild;
        }

        void apply(int kg, Batch of, RecordCursor record) throws IOException {
            long start = System.nanoTime();
            if (of != batch) {
                batch = of;
                statesOf = statesOfBatch.computeIfAbsent(of, b -> new ArrayList<>());
                segment = rebuild.segmentId(of.location());
                batchNumber = rebuild.batchNumber(of.location());
            }
            LoggedState<K> state = state(record);
            boolean first =
                    rebuild.indexIfFirst(
                            kg,
                            state.id(),
                            record.bytes(),
                            record.keyOffset(),
                            record.keyLength(),
                            segment,
                            batchNumber,
                            record.positionInKeyGroup(),
                            record.encodedLength(),
                            record.isTombstone());
            indexNanos += System.nanoTime() - start;
            if (!first) {
                return;
            }
            if (record.isTombstone()) {
                // Nothing older is put, so there is nothing to remove from the heap.
                return;
            }
            try {
                in.setBuffer(record.bytes(), record.keyOffset(), record.keyLength());
                K k = key.deserialize(in);
                Object namespace = namespace(state).deserialize(in);
                in.setBuffer(record.bytes(), record.valueOffset(), record.valueLength());
                Object value = value(state).deserialize(in);
                state.table().getMapForKeyGroup(kg).put(k, namespace, value);
            } catch (IOException | RuntimeException e) {
                // The bytes passed their CRC, so this is the state's serializer failing, not a
                // damaged log. Its exception is rethrown as it is (Flink's contract: the
                // serializer's exception is the cause of the build failure); where it happened
                // travels along.
                e.addSuppressed(
                        new IOException(
                                "Cannot deserialize a record of state '"
                                        + state.name()
                                        + "' in "
                                        + record.file()
                                        + " at "
                                        + record.position()
                                        + " with the state's serializers (the record's CRC32C is intact)"));
                throw e;
            }
        }

        /** The state a record of the current batch belongs to. */
        private LoggedState<K> state(RecordCursor record) throws CorruptLogException {
            int id = record.stateId();
            LoggedState<K> state = id < statesOf.size() ? statesOf.get(id) : null;
            if (state != null) {
                return state;
            }
            String name = batch.stateName(record);
            state = states.get(name);
            if (state == null) {
                throw new CorruptLogException(
                        record.file(),
                        record.position(),
                        "record of state '" + name + "', which the checkpoint's meta data lacks");
            }
            while (statesOf.size() <= id) {
                statesOf.add(null);
            }
            statesOf.set(id, state);
            return state;
        }

        private TypeSerializer<Object> namespace(LoggedState<K> state) {
            return namespaces.computeIfAbsent(
                    state.name(), n -> state.table().getNamespaceSerializer().duplicate());
        }

        private TypeSerializer<Object> value(LoggedState<K> state) {
            return values.computeIfAbsent(
                    state.name(), n -> state.table().getStateSerializer().duplicate());
        }
    }
}
