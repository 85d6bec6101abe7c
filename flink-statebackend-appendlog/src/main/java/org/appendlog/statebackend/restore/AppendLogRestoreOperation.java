package org.appendlog.statebackend.restore;

import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchFormat.BatchIndex;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.CorruptLogException;
import org.appendlog.statebackend.log.LogRecord;
import org.appendlog.statebackend.tracking.EntryRef;
import org.appendlog.statebackend.tracking.LoggedState;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.heap.StateMap;
import org.apache.flink.util.IOUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Rebuilds heap state from the log: reads the batches of the restored checkpoints, only the key
 * groups this backend owns, applies records in checkpoint order per key group (latest wins,
 * tombstones delete) and rebuilds the index. The owned key groups are split into contiguous
 * slices read by parallel threads; each slice is read from every batch in one sequential read.
 */
public final class AppendLogRestoreOperation<K> {

    private static final Logger LOG = LoggerFactory.getLogger(AppendLogRestoreOperation.class);

    private final List<RestoredCheckpoint> checkpoints;
    private final KeyGroupRange owned;
    private final Map<String, LoggedState<K>> states;
    private final TypeSerializer<K> keySerializer;
    private final LogIndex index;
    private final int parallelism;

    public AppendLogRestoreOperation(
            List<RestoredCheckpoint> checkpoints,
            KeyGroupRange owned,
            Map<String, LoggedState<K>> states,
            TypeSerializer<K> keySerializer,
            LogIndex index,
            int parallelism) {
        this.checkpoints = checkpoints;
        this.owned = owned;
        this.states = states;
        this.keySerializer = keySerializer;
        this.index = index;
        this.parallelism = parallelism;
    }

    /** A batch to read, with the handle of its segment and its verified header and footer. */
    private static final class SourceBatch {
        final StreamStateHandle segment;
        final BatchIndex batch;

        SourceBatch(StreamStateHandle segment, BatchIndex batch) {
            this.segment = segment;
            this.batch = batch;
        }

        String file() {
            return RestoredCheckpoint.describe(segment);
        }
    }

    /** Restores the state and returns the batches that later checkpoints build on. */
    public List<BatchLocation> restore() throws Exception {
        long start = System.nanoTime();
        Map<String, BatchLocation> distinct = new LinkedHashMap<>();
        Map<String, StreamStateHandle> segmentHandles = new HashMap<>();
        for (RestoredCheckpoint checkpoint : checkpoints) {
            for (BatchLocation batch : checkpoint.manifest.batchesFor(owned)) {
                StreamStateHandle handle = checkpoint.segments.get(batch.segment());
                if (handle == null) {
                    throw new IOException(
                            "Checkpoint lists batch "
                                    + batch
                                    + " but holds no handle for segment "
                                    + batch.segment());
                }
                segmentHandles.put(batch.segment(), handle);
                distinct.putIfAbsent(batch.segment() + "@" + batch.offset(), batch);
            }
        }
        List<SourceBatch> sources = readIndexes(distinct.values(), segmentHandles);
        for (SourceBatch source : sources) {
            index.batchAdded(source.batch.location.segment(), source.batch.location.length());
        }

        List<KeyGroupRange> slices = slices(owned, parallelism);
        ExecutorService pool = Executors.newFixedThreadPool(slices.size());
        try {
            List<Future<Long>> results = new ArrayList<>();
            for (KeyGroupRange slice : slices) {
                results.add(pool.submit(() -> restoreSlice(slice, sources)));
            }
            long bytes = 0;
            for (Future<Long> result : results) {
                bytes += get(result);
            }
            LOG.info(
                    "Restored key groups {} from {} batches ({} bytes read by {} threads) in {} ms",
                    owned,
                    sources.size(),
                    bytes,
                    slices.size(),
                    (System.nanoTime() - start) / 1_000_000);
        } finally {
            pool.shutdownNow();
        }
        List<BatchLocation> restored = new ArrayList<>();
        for (RestoredCheckpoint checkpoint : checkpoints) {
            restored.addAll(checkpoint.manifest.batches());
        }
        return dedupe(restored);
    }

    private static List<BatchLocation> dedupe(List<BatchLocation> batches) {
        Map<String, BatchLocation> distinct = new LinkedHashMap<>();
        for (BatchLocation b : batches) {
            distinct.putIfAbsent(b.segment() + "@" + b.offset(), b);
        }
        return new ArrayList<>(distinct.values());
    }

    private static long get(Future<Long> result) throws Exception {
        try {
            return result.get();
        } catch (ExecutionException e) {
            Throwable cause = e.getCause();
            if (cause instanceof Exception) {
                throw (Exception) cause;
            }
            throw e;
        }
    }

    private static List<SourceBatch> readIndexes(
            Iterable<BatchLocation> batches, Map<String, StreamStateHandle> handles)
            throws IOException {
        List<SourceBatch> sources = new ArrayList<>();
        Map<String, FSDataInputStream> open = new HashMap<>();
        try {
            for (BatchLocation location : batches) {
                StreamStateHandle handle = handles.get(location.segment());
                FSDataInputStream in = open.get(location.segment());
                if (in == null) {
                    in = openSegment(handle);
                    open.put(location.segment(), in);
                }
                sources.add(
                        new SourceBatch(
                                handle,
                                BatchFormat.readIndex(
                                        in, RestoredCheckpoint.describe(handle), location)));
            }
        } finally {
            open.values().forEach(IOUtils::closeQuietly);
        }
        return sources;
    }

    private static FSDataInputStream openSegment(StreamStateHandle handle) throws IOException {
        try {
            return handle.openInputStream();
        } catch (FileNotFoundException e) {
            throw new IOException(
                    "State log segment "
                            + RestoredCheckpoint.describe(handle)
                            + " of the restored checkpoint is missing",
                    e);
        }
    }

    /** Splits {@code range} into at most {@code n} contiguous, non-empty slices. */
    static List<KeyGroupRange> slices(KeyGroupRange range, int n) {
        int groups = range.getNumberOfKeyGroups();
        int count = Math.max(1, Math.min(n, groups));
        List<KeyGroupRange> slices = new ArrayList<>(count);
        int start = range.getStartKeyGroup();
        for (int i = 0; i < count; i++) {
            int size = groups / count + (i < groups % count ? 1 : 0);
            slices.add(KeyGroupRange.of(start, start + size - 1));
            start += size;
        }
        return slices;
    }

    /** A record read from the log, with where it came from. */
    private static final class ReadRecord {
        final LogRecord record;
        final SourceBatch source;
        final long fileOffset;

        ReadRecord(LogRecord record, SourceBatch source, long fileOffset) {
            this.record = record;
            this.source = source;
            this.fileOffset = fileOffset;
        }
    }

    private long restoreSlice(KeyGroupRange slice, List<SourceBatch> sources) throws Exception {
        Map<Integer, List<ReadRecord>> perKeyGroup = new HashMap<>();
        Map<StreamStateHandle, FSDataInputStream> open = new HashMap<>();
        long bytes = 0;
        try {
            for (SourceBatch source : sources) {
                KeyGroupRange part = source.batch.location.keyGroups().getIntersection(slice);
                if (part.getNumberOfKeyGroups() == 0) {
                    continue;
                }
                FSDataInputStream in = open.get(source.segment);
                if (in == null) {
                    in = openSegment(source.segment);
                    open.put(source.segment, in);
                }
                long[] read = {0};
                BatchFormat.readKeyGroups(
                        in,
                        source.file(),
                        source.batch,
                        part.getStartKeyGroup(),
                        part.getEndKeyGroup(),
                        (kg, data, offset, length, fileOffset) -> {
                            read[0] += length;
                            decode(kg, data, offset, length, fileOffset, source, perKeyGroup);
                        });
                bytes += read[0];
            }
        } finally {
            open.values().forEach(IOUtils::closeQuietly);
        }
        Serializers serializers = new Serializers();
        for (Map.Entry<Integer, List<ReadRecord>> group : perKeyGroup.entrySet()) {
            List<ReadRecord> records = group.getValue();
            // Stable: records of one checkpoint keep their order within the batch.
            records.sort(Comparator.comparingLong(r -> r.record.checkpointId));
            for (ReadRecord r : records) {
                apply(group.getKey(), r, serializers);
            }
        }
        return bytes;
    }

    private static void decode(
            int kg,
            byte[] data,
            int offset,
            int length,
            long fileOffset,
            SourceBatch source,
            Map<Integer, List<ReadRecord>> perKeyGroup)
            throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(data, offset, length);
        List<ReadRecord> records = perKeyGroup.computeIfAbsent(kg, k -> new ArrayList<>());
        while (in.available() > 0) {
            long at = fileOffset + (in.getPosition() - offset);
            try {
                records.add(new ReadRecord(LogRecord.read(in), source, at));
            } catch (IOException e) {
                throw new CorruptLogException(source.file(), at, "unreadable record: " + e);
            }
        }
    }

    /** Serializers duplicated for one restore thread (serializers are not thread-safe). */
    private final class Serializers {
        final TypeSerializer<K> key = keySerializer.duplicate();
        final Map<String, TypeSerializer<Object>> namespaces = new HashMap<>();
        final Map<String, TypeSerializer<Object>> values = new HashMap<>();

        TypeSerializer<Object> namespace(LoggedState<K> state) {
            return namespaces.computeIfAbsent(
                    state.name(), n -> state.table().getNamespaceSerializer().duplicate());
        }

        TypeSerializer<Object> value(LoggedState<K> state) {
            return values.computeIfAbsent(
                    state.name(), n -> state.table().getStateSerializer().duplicate());
        }
    }

    private void apply(int kg, ReadRecord r, Serializers serializers) throws IOException {
        LogRecord record = r.record;
        List<String> names = r.source.batch.stateNames;
        if (record.stateId >= names.size()) {
            throw new CorruptLogException(
                    r.source.file(), r.fileOffset, "record refers to unknown state id " + record.stateId);
        }
        String name = names.get(record.stateId);
        LoggedState<K> state = states.get(name);
        if (state == null) {
            throw new CorruptLogException(
                    r.source.file(),
                    r.fileOffset,
                    "record of state '" + name + "', which the checkpoint's meta data lacks");
        }
        try {
            DataInputDeserializer keyIn = new DataInputDeserializer(record.keyAndNamespace);
            K key = serializers.key.deserialize(keyIn);
            Object namespace = serializers.namespace(state).deserialize(keyIn);
            StateMap<K, Object, Object> map = state.table().getMapForKeyGroup(kg);
            EntryRef entry = new EntryRef(state.id(), key, namespace, kg);
            int length = record.encodedLength();
            if (record.isTombstone()) {
                map.remove(key, namespace);
            } else {
                map.put(
                        key,
                        namespace,
                        serializers
                                .value(state)
                                .deserialize(new DataInputDeserializer(record.value)));
            }
            index.recordWritten(entry, r.source.batch.location.segment(), length, record.isTombstone());
        } catch (IOException | RuntimeException e) {
            // The bytes passed their CRC, so this is the state's serializer failing, not a
            // damaged log: its exception stays the cause, the log line says where it happened.
            LOG.error(
                    "Cannot deserialize a record of state '{}' in {} at offset {}",
                    name,
                    r.source.file(),
                    r.fileOffset);
            throw e;
        }
    }
}
