package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.tracking.EntryRef;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * The dirty entries of one synchronous phase, as log records holding the values as of the
 * barrier. Values of immutable types are kept as references and serialized in the asynchronous
 * phase ({@link #materialize}): the object cannot change after the barrier, and the task thread
 * is spared the serialization. Mutable values are serialized at once. It is kept until a checkpoint that contains it completes, so that a failed or late
 * checkpoint never loses changes: the next batch simply carries it again.
 */
final class Capture {

    final long checkpointId;
    final BatchBuilder records;
    private final List<EntryRef> entries = new ArrayList<>();
    private final List<Deferred> deferred = new ArrayList<>();
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

    private static final class Deferred {
        final EntryRef entry;
        final Object value;
        final Serializers serializers;

        Deferred(EntryRef entry, Object value, Serializers serializers) {
            this.entry = entry;
            this.value = value;
            this.serializers = serializers;
        }
    }

    /** Records {@code entry} with an immutable {@code value}, to be encoded by {@link #materialize}. */
    void defer(EntryRef entry, Object value, Serializers serializers) {
        deferred.add(new Deferred(entry, value, serializers));
    }

    /** Encodes the deferred records; every reader of {@link #records} calls this first. */
    synchronized void materialize() throws IOException {
        for (Deferred d : deferred) {
            try {
                add(d.entry, d.serializers.key, d.serializers.namespace, d.serializers.value, d.value);
            } catch (IOException | RuntimeException e) {
                // The capture stays pending: a later checkpoint tries again.
                throw new IOException(
                        "Checkpoint "
                                + checkpointId
                                + " could not serialize an entry of state '"
                                + records.stateNames().get(d.entry.stateId())
                                + "' (key group "
                                + d.entry.keyGroup()
                                + ") with the state's serializers: "
                                + e,
                        e);
            }
        }
        deferred.clear();
    }

    /** Encodes {@code entry} with {@code value}, or a tombstone if the value is null. */
    void add(
            EntryRef entry,
            TypeSerializer<Object> keySerializer,
            TypeSerializer<Object> namespaceSerializer,
            TypeSerializer<Object> valueSerializer,
            @Nullable Object value)
            throws IOException {
        keyScratch.clear();
        keySerializer.serialize(entry.key(), keyScratch);
        namespaceSerializer.serialize(entry.namespace(), keyScratch);
        int length;
        if (value == null) {
            length =
                    records.add(
                            entry.keyGroup(),
                            checkpointId,
                            entry.stateId(),
                            keyScratch.getSharedBuffer(),
                            keyScratch.length(),
                            null,
                            0);
        } else {
            valueScratch.clear();
            valueSerializer.serialize(value, valueScratch);
            length =
                    records.add(
                            entry.keyGroup(),
                            checkpointId,
                            entry.stateId(),
                            keyScratch.getSharedBuffer(),
                            keyScratch.length(),
                            valueScratch.getSharedBuffer(),
                            valueScratch.length());
        }
        added(entry, length, value == null);
    }

    private void added(EntryRef entry, int length, boolean tombstone) {
        if (entries.size() == lengths.length) {
            lengths = java.util.Arrays.copyOf(lengths, lengths.length * 2);
        }
        lengths[entries.size()] = tombstone ? -length : length;
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
