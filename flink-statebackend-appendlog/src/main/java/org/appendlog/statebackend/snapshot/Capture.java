package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.tracking.EntryRef;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The changes of one synchronous phase, as log records holding the values as of the barrier: the
 * marked entries, serialized at the barrier, and the {@link ChangeScan}s of the stamped states,
 * written in the asynchronous phase ({@link #materialize}). It is kept until a checkpoint that
 * contains it completes, so that a failed or late checkpoint never loses changes: the next batch
 * simply carries it again.
 */
final class Capture {

    final long checkpointId;
    final BatchBuilder records;
    private final List<EntryRef> entries = new ArrayList<>();
    private final List<ChangeScan> scans = new ArrayList<>();
    private final DataOutputSerializer keyScratch = new DataOutputSerializer(64);
    private final DataOutputSerializer valueScratch = new DataOutputSerializer(256);
    /** Encoded length per entry; negative for a tombstone. */
    private int[] lengths = new int[16];

    Capture(long checkpointId, BatchBuilder records) {
        this.checkpointId = checkpointId;
        this.records = records;
    }

    /** Serializers for records encoded off the task thread: duplicates, not shared. */
    static final class Serializers {
        final TypeSerializer<Object> key;
        final TypeSerializer<Object> namespace;
        final TypeSerializer<Object> value;

        Serializers(
                TypeSerializer<Object> key,
                TypeSerializer<Object> namespace,
                TypeSerializer<Object> value) {
            this.key = key.duplicate();
            this.namespace = namespace.duplicate();
            this.value = value.duplicate();
        }
    }

    void scan(ChangeScan scan) {
        scans.add(scan);
    }

    /**
     * Writes the scans' records; every reader of {@link #records} calls this first. A scan that
     * fails is dropped, not retried (its snapshots are gone): its state's history does not advance,
     * so the next checkpoint's scan covers its changes.
     */
    synchronized void materialize(Map<Integer, ScanHistory> histories) throws IOException {
        try {
            while (!scans.isEmpty()) {
                ChangeScan scan = scans.remove(0);
                ScanHistory history = histories.get(scan.stateId);
                try {
                    scan.writeTo(this, history.since(checkpointId, scan.table));
                } catch (IOException | RuntimeException e) {
                    throw new IOException(
                            "Checkpoint "
                                    + checkpointId
                                    + " could not serialize an entry of state '"
                                    + records.stateNames().get(scan.stateId)
                                    + "' with the state's serializers: "
                                    + e,
                            e);
                } finally {
                    scan.release();
                }
                history.succeeded(checkpointId, scan.table, scan.versions());
            }
        } finally {
            release();
        }
    }

    /** Lets go of the snapshots of scans that did not run (a failed or cancelled checkpoint). */
    synchronized void release() {
        scans.forEach(ChangeScan::release);
        scans.clear();
    }

    /** Encodes {@code entry} with {@code value}, or a tombstone if the value is null. */
    void add(EntryRef entry, Serializers serializers, @Nullable Object value) throws IOException {
        keyScratch.clear();
        serializers.key.serialize(entry.key(), keyScratch);
        serializers.namespace.serialize(entry.namespace(), keyScratch);
        byte[] valueBytes = null;
        int valueLength = 0;
        if (value != null) {
            valueScratch.clear();
            serializers.value.serialize(value, valueScratch);
            valueBytes = valueScratch.getSharedBuffer();
            valueLength = valueScratch.length();
        }
        int length =
                records.add(
                        entry.keyGroup(),
                        checkpointId,
                        entry.stateId(),
                        keyScratch.getSharedBuffer(),
                        keyScratch.length(),
                        valueBytes,
                        valueLength);
        if (entries.size() == lengths.length) {
            lengths = Arrays.copyOf(lengths, lengths.length * 2);
        }
        lengths[entries.size()] = value == null ? -length : length;
        entries.add(entry);
    }

    /** Tells the index that this capture's records now live in {@code segment}. */
    void indexInto(LogIndex index, String segment) {
        for (int i = 0; i < entries.size(); i++) {
            int length = lengths[i];
            index.recordWritten(entries.get(i), segment, Math.abs(length), length < 0);
        }
    }
}
