package org.appendlog.statebackend.log;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import java.io.IOException;

/**
 * One record: the checkpoint that wrote it, the state id (an index into the batch header's state
 * table), the serialized key and namespace, and the serialized value or a tombstone. Records keep
 * their checkpoint id when compaction copies them, so "latest wins" holds in any reading order.
 */
public final class LogRecord {

    private static final byte VALUE = 0;
    private static final byte TOMBSTONE = 1;

    public final long checkpointId;
    public final int stateId;
    public final byte[] keyAndNamespace;
    /** Null for a tombstone. */
    public final byte[] value;

    public LogRecord(long checkpointId, int stateId, byte[] keyAndNamespace, byte[] value) {
        this.checkpointId = checkpointId;
        this.stateId = stateId;
        this.keyAndNamespace = keyAndNamespace;
        this.value = value;
    }

    static boolean isTombstoneKind(byte kind) {
        return kind == TOMBSTONE;
    }

    public boolean isTombstone() {
        return value == null;
    }

    /** The number of bytes this record takes in the log. */
    public int encodedLength() {
        return 8 + 2 + 1 + 4 + keyAndNamespace.length + (value == null ? 0 : 4 + value.length);
    }

    /** Appends a record to {@code out}; returns its encoded length. */
    public static int write(
            DataOutputSerializer out,
            long checkpointId,
            int stateId,
            byte[] keyNs,
            int keyNsOffset,
            int keyNsLength,
            byte[] value,
            int valueOffset,
            int valueLength)
            throws IOException {
        int start = out.length();
        out.writeLong(checkpointId);
        out.writeShort(stateId);
        out.writeByte(value == null ? TOMBSTONE : VALUE);
        out.writeInt(keyNsLength);
        out.write(keyNs, keyNsOffset, keyNsLength);
        if (value != null) {
            out.writeInt(valueLength);
            out.write(value, valueOffset, valueLength);
        }
        return out.length() - start;
    }

    /** Receives one encoded record of a key group, read in place. */
    public interface EncodedVisitor {
        void accept(
                int keyGroup,
                int stateId,
                byte[] bytes,
                int keyOffset,
                int keyLength,
                int encodedLength,
                boolean tombstone);
    }

    /** Visits the records of {@code keyGroup} encoded in {@code bytes[0, length)}, in order. */
    static void forEach(int keyGroup, byte[] bytes, int length, EncodedVisitor visitor) {
        int at = 0;
        while (at < length) {
            int stateId = ((bytes[at + 8] & 0xff) << 8) | (bytes[at + 9] & 0xff);
            boolean tombstone = bytes[at + 10] == TOMBSTONE;
            int keyLength = readInt(bytes, at + 11);
            int keyOffset = at + 15;
            int end = keyOffset + keyLength;
            if (!tombstone) {
                end += 4 + readInt(bytes, end);
            }
            visitor.accept(keyGroup, stateId, bytes, keyOffset, keyLength, end - at, tombstone);
            at = end;
        }
    }

    private static int readInt(byte[] b, int at) {
        return ((b[at] & 0xff) << 24)
                | ((b[at + 1] & 0xff) << 16)
                | ((b[at + 2] & 0xff) << 8)
                | (b[at + 3] & 0xff);
    }

    public static LogRecord read(DataInputDeserializer in) throws IOException {
        long checkpointId = in.readLong();
        int stateId = in.readUnsignedShort();
        byte kind = in.readByte();
        if (kind != VALUE && kind != TOMBSTONE) {
            throw new IOException("unknown record kind " + kind);
        }
        byte[] keyNs = new byte[in.readInt()];
        in.readFully(keyNs);
        byte[] value = null;
        if (kind == VALUE) {
            value = new byte[in.readInt()];
            in.readFully(value);
        }
        return new LogRecord(checkpointId, stateId, keyNs, value);
    }
}
