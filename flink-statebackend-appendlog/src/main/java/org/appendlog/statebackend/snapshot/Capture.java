package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.tracking.BufferedChanges;
import org.appendlog.statebackend.tracking.EntryRef;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Map;

/**
 * The changes of one synchronous phase, as log records holding the values as of the barrier: the
 * writes the {@link org.appendlog.statebackend.tracking.ChangeTracker} logged, deduplicated in the
 * asynchronous phase ({@link #materialize}), followed by the marked entries, looked up and
 * serialized at the barrier (so a mark, which holds the barrier's value, wins over a logged write
 * of the same entry). It is kept until a checkpoint that contains it completes, so that a failed
 * or late checkpoint never loses changes: the next batch simply carries it again.
 */
final class Capture {

    final long checkpointId;
    private final BatchBuilder marked;
    private final Written markedWritten = new Written();
    private final DataOutputSerializer keyScratch = new DataOutputSerializer(64);
    private final DataOutputSerializer valueScratch = new DataOutputSerializer(256);
    @Nullable private BufferedChanges logged;
    private Map<Integer, Serializers> loggedSerializers;
    @Nullable private BatchBuilder records;
    private Written written;

    Capture(long checkpointId, BatchBuilder marked) {
        this.checkpointId = checkpointId;
        this.marked = marked;
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

    /** The logged writes, and per state id the serializers to read their keys for the index. */
    void logged(BufferedChanges changes, Map<Integer, Serializers> serializers) {
        this.logged = changes;
        this.loggedSerializers = serializers;
    }

    /** Encodes a marked {@code entry} with {@code value}, or a tombstone if the value is null. */
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
                marked.add(
                        entry.keyGroup(),
                        checkpointId,
                        entry.stateId(),
                        keyScratch.getSharedBuffer(),
                        0,
                        keyScratch.length(),
                        valueBytes,
                        0,
                        valueLength);
        markedWritten.add(entry, length, value == null);
    }

    /** The capture's records; {@link #materialize} first. */
    BatchBuilder records() {
        return records;
    }

    /** Builds the records: the latest logged write of each entry, then the marked entries. */
    synchronized void materialize() throws IOException {
        if (records != null) {
            return;
        }
        if (logged == null || logged.recordCount() == 0) {
            records = marked;
            written = markedWritten;
        } else {
            BatchBuilder all =
                    new BatchBuilder(checkpointId, marked.keyGroups(), marked.stateNames());
            Written allWritten = new Written();
            LoggedRecordReader reader = new LoggedRecordReader(all, allWritten);
            logged.forEachLatest(reader);
            if (reader.failure != null) {
                throw reader.failure;
            }
            all.appendAll(marked);
            allWritten.addAll(markedWritten);
            records = all;
            written = allWritten;
        }
        if (logged != null) {
            logged.recycle();
            logged = null;
        }
    }

    /** Copies logged records into the batch and reads their keys for the index. */
    private final class LoggedRecordReader implements BufferedChanges.RecordVisitor {
        final BatchBuilder out;
        final Written outWritten;
        final DataInputDeserializer in = new DataInputDeserializer();
        IOException failure;

        LoggedRecordReader(BatchBuilder out, Written outWritten) {
            this.out = out;
            this.outWritten = outWritten;
        }

        @Override
        public void accept(byte[] buffer, int at, int length) {
            if (failure != null) {
                return;
            }
            int stateId = BufferedChanges.stateId(buffer, at);
            int keyGroup = BufferedChanges.keyGroup(buffer, at);
            int keyOffset = BufferedChanges.keyOffset(at);
            int keyLength = BufferedChanges.keyLength(buffer, at);
            int valueLength = BufferedChanges.valueLength(buffer, at);
            try {
                Serializers serializers = loggedSerializers.get(stateId);
                in.setBuffer(buffer, keyOffset, keyLength);
                EntryRef entry =
                        new EntryRef(
                                stateId,
                                serializers.key.deserialize(in),
                                serializers.namespace.deserialize(in),
                                keyGroup);
                int recordLength =
                        out.add(
                                keyGroup,
                                checkpointId,
                                stateId,
                                buffer,
                                keyOffset,
                                keyLength,
                                valueLength < 0 ? null : buffer,
                                BufferedChanges.valueOffset(buffer, at),
                                Math.max(0, valueLength));
                outWritten.add(entry, recordLength, valueLength < 0);
            } catch (IOException | RuntimeException e) {
                failure =
                        new IOException(
                                "Checkpoint "
                                        + checkpointId
                                        + " could not read a logged key of state '"
                                        + marked.stateNames().get(stateId)
                                        + "' (key group "
                                        + keyGroup
                                        + ")",
                                e);
            }
        }
    }

    /** Tells the index that this capture's records now live in {@code segment}. */
    void indexInto(LogIndex index, String segment) {
        written.indexInto(index, segment);
    }

    /** The entries of the records, in order, with each record's length for the index. */
    private static final class Written {
        private final List<EntryRef> entries = new ArrayList<>();
        /** Encoded length per entry; negative for a tombstone. */
        private int[] lengths = new int[16];

        void add(EntryRef entry, int length, boolean tombstone) {
            if (entries.size() == lengths.length) {
                lengths = Arrays.copyOf(lengths, lengths.length * 2);
            }
            lengths[entries.size()] = tombstone ? -length : length;
            entries.add(entry);
        }

        void addAll(Written other) {
            for (int i = 0; i < other.entries.size(); i++) {
                int length = other.lengths[i];
                add(other.entries.get(i), Math.abs(length), length < 0);
            }
        }

        void indexInto(LogIndex index, String segment) {
            for (int i = 0; i < entries.size(); i++) {
                int length = lengths[i];
                index.recordWritten(entries.get(i), segment, Math.abs(length), length < 0);
            }
        }
    }
}
