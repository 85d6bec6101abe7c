package org.appendlog.statebackend.restore;

import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.CorruptLogException;
import org.appendlog.statebackend.log.LogRecord;
import org.appendlog.statebackend.log.LogScanner;
import org.appendlog.statebackend.log.LogScanner.Batch;
import org.appendlog.statebackend.log.LogScanner.ScannedRecord;
import org.appendlog.statebackend.tracking.LoggedState;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.heap.StateMap;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Rebuilds heap state from the log: reads the batches of the restored checkpoints, only the key
 * groups this backend owns, applies records in checkpoint order per key group (latest wins,
 * tombstones delete) and rebuilds the index. The owned key groups are split into contiguous
 * slices read by parallel threads.
 */
public final class AppendLogRestoreOperation<K> {

    private static final Logger LOG = LoggerFactory.getLogger(AppendLogRestoreOperation.class);

    private final List<RestoredCheckpoint> checkpoints;
    private final KeyGroupRange owned;
    private final Map<String, LoggedState<K>> states;
    private final TypeSerializer<K> keySerializer;
    private final LogIndex index;
    private final int parallelism;
    private long bytesRead;

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

    /** Restores the state and returns the batches that later checkpoints build on. */
    public List<BatchLocation> restore() throws Exception {
        long start = System.nanoTime();
        Map<String, BatchLocation> all = new LinkedHashMap<>();
        Map<String, BatchLocation> owning = new LinkedHashMap<>();
        Map<String, StreamStateHandle> segments = new HashMap<>();
        for (RestoredCheckpoint checkpoint : checkpoints) {
            segments.putAll(checkpoint.segments);
            for (BatchLocation batch : checkpoint.manifest.batches()) {
                all.putIfAbsent(batch.key(), batch);
            }
            for (BatchLocation batch : checkpoint.manifest.batchesFor(owned)) {
                owning.putIfAbsent(batch.key(), batch);
            }
        }
        List<Batch> batches = LogScanner.openBatches(owning.values(), segments::get);
        for (Batch batch : batches) {
            index.batchAdded(batch.location().segment(), batch.location().length());
        }
        List<Long> perSlice =
                LogScanner.forEachSlice(
                        owned,
                        parallelism,
                        "appendlog-restore " + owned,
                        slice -> restoreSlice(slice, batches));
        bytesRead = perSlice.stream().mapToLong(Long::longValue).sum();
        LOG.info(
                "Restored key groups {} from {} batches ({} bytes of records, {} threads) in {} ms",
                owned,
                batches.size(),
                bytesRead,
                parallelism,
                (System.nanoTime() - start) / 1_000_000);
        return new ArrayList<>(all.values());
    }

    /** Record bytes read by the last {@link #restore()}. */
    public long bytesRead() {
        return bytesRead;
    }

    private long restoreSlice(KeyGroupRange slice, List<Batch> batches) throws Exception {
        long[] bytes = {0};
        Map<Integer, List<ScannedRecord>> perKeyGroup =
                LogScanner.scan(batches, slice, LogScanner.ReadGate.NONE, bytes);
        Serializers serializers = new Serializers();
        for (Map.Entry<Integer, List<ScannedRecord>> group : perKeyGroup.entrySet()) {
            List<ScannedRecord> records = group.getValue();
            // Stable: records of one checkpoint keep their order within the batch.
            records.sort(Comparator.comparingLong(r -> r.record.checkpointId));
            for (ScannedRecord r : records) {
                apply(group.getKey(), r, serializers);
            }
        }
        return bytes[0];
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

    private void apply(int kg, ScannedRecord r, Serializers serializers) throws IOException {
        LogRecord record = r.record;
        String name = r.stateName();
        LoggedState<K> state = states.get(name);
        if (state == null) {
            throw new CorruptLogException(
                    r.batch.file(),
                    r.fileOffset,
                    "record of state '" + name + "', which the checkpoint's meta data lacks");
        }
        try {
            DataInputDeserializer keyIn = new DataInputDeserializer(record.keyAndNamespace);
            K key = serializers.key.deserialize(keyIn);
            Object namespace = serializers.namespace(state).deserialize(keyIn);
            StateMap<K, Object, Object> map = state.table().getMapForKeyGroup(kg);
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
            index.recordWritten(
                    kg,
                    state.id(),
                    record.keyAndNamespace,
                    0,
                    record.keyAndNamespace.length,
                    r.batch.location().segment(),
                    record.encodedLength(),
                    record.isTombstone());
        } catch (IOException | RuntimeException e) {
            // The bytes passed their CRC, so this is the state's serializer failing, not a
            // damaged log. Its exception is rethrown as it is (Flink's contract: the serializer's
            // exception is the cause of the build failure); where it happened travels along.
            e.addSuppressed(
                    new IOException(
                            "Cannot deserialize a record of state '"
                                    + name
                                    + "' in "
                                    + r.batch.file()
                                    + " at offset "
                                    + r.fileOffset
                                    + " with the state's serializers (the record's CRC32C is intact)"));
            throw e;
        }
    }
}
