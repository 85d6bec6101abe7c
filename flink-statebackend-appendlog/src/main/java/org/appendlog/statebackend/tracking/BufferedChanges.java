package org.appendlog.statebackend.tracking;

import java.util.Arrays;
import java.util.List;

/**
 * The records that a {@link ChangeBuffer} held at a barrier. Read once, in the asynchronous phase:
 * {@link #forEachLatest} keeps the last record of each (state, key, namespace), found with an
 * open-addressing table over the encoded keys, so that deduplication touches the buffer's bytes
 * sequentially and compares no objects.
 */
public final class BufferedChanges {

    /** Key group (2 bytes), state (2 bytes), key and namespace length (4 bytes). */
    static final int HEADER_BYTES = 8;

    /** Receives one record: its encoding is {@code buffer[offset, offset + length)}. */
    public interface RecordVisitor {
        void accept(byte[] buffer, int offset, int length);
    }

    private final List<byte[]> chunks;
    private final List<Integer> used;
    private final int records;
    private final ChangeBuffer owner;

    BufferedChanges(List<byte[]> chunks, List<Integer> used, int records, ChangeBuffer owner) {
        this.chunks = chunks;
        this.used = used;
        this.records = records;
        this.owner = owner;
    }

    public int recordCount() {
        return records;
    }

    /** Visits the latest record of every entry, in no particular order. */
    public void forEachLatest(RecordVisitor visitor) {
        if (records == 0) {
            return;
        }
        int capacity = Integer.highestOneBit(Math.max(2, records) * 2 - 1) << 1;
        long[] slots = new long[capacity];
        int mask = capacity - 1;
        for (int c = 0; c < chunks.size(); c++) {
            byte[] chunk = chunks.get(c);
            int end = used.get(c);
            int at = 0;
            while (at < end) {
                int keyLength = readInt(chunk, at + 4);
                int slot = hash(chunk, at, keyLength) & mask;
                while (slots[slot] != 0 && !sameEntry(slots[slot], chunk, at, keyLength)) {
                    slot = (slot + 1) & mask;
                }
                // Later records replace earlier ones of the same entry.
                slots[slot] = position(c, at);
                at += recordLength(chunk, at);
            }
        }
        for (long slot : slots) {
            if (slot != 0) {
                byte[] chunk = chunks.get(chunkOf(slot));
                int at = offsetOf(slot);
                visitor.accept(chunk, at, recordLength(chunk, at));
            }
        }
    }

    /** Returns the chunks to the buffer for reuse; no reads after this. */
    public void recycle() {
        chunks.forEach(owner::recycle);
        chunks.clear();
    }

    // ------------------------------------------------------------------------
    //  record layout
    // ------------------------------------------------------------------------

    public static int keyGroup(byte[] record, int at) {
        return ((record[at] & 0xff) << 8) | (record[at + 1] & 0xff);
    }

    public static int stateId(byte[] record, int at) {
        return ((record[at + 2] & 0xff) << 8) | (record[at + 3] & 0xff);
    }

    public static int keyOffset(int at) {
        return at + HEADER_BYTES;
    }

    public static int keyLength(byte[] record, int at) {
        return readInt(record, at + 4);
    }

    /** The value's length, or -1 for a removal. */
    public static int valueLength(byte[] record, int at) {
        return readInt(record, keyOffset(at) + keyLength(record, at));
    }

    public static int valueOffset(byte[] record, int at) {
        return keyOffset(at) + keyLength(record, at) + 4;
    }

    private static int recordLength(byte[] record, int at) {
        return valueOffset(record, at) - at + Math.max(0, valueLength(record, at));
    }

    private boolean sameEntry(long slot, byte[] chunk, int at, int keyLength) {
        byte[] other = chunks.get(chunkOf(slot));
        int otherAt = offsetOf(slot);
        // The state id and the key and namespace, with their length in between.
        return Arrays.equals(
                other, otherAt + 2, otherAt + HEADER_BYTES + readInt(other, otherAt + 4),
                chunk, at + 2, at + HEADER_BYTES + keyLength);
    }

    private static int hash(byte[] chunk, int at, int keyLength) {
        int h = stateId(chunk, at);
        for (int i = keyOffset(at), end = i + keyLength; i < end; i++) {
            h = 31 * h + chunk[i];
        }
        h *= 0x9E3779B9;
        return h ^ (h >>> 16);
    }

    private static int readInt(byte[] b, int at) {
        return ((b[at] & 0xff) << 24)
                | ((b[at + 1] & 0xff) << 16)
                | ((b[at + 2] & 0xff) << 8)
                | (b[at + 3] & 0xff);
    }

    /** Slot value: chunk and offset, plus one so that zero means empty. */
    private static long position(int chunk, int offset) {
        return ((long) chunk << 32 | offset) + 1;
    }

    private static int chunkOf(long slot) {
        return (int) ((slot - 1) >>> 32);
    }

    private static int offsetOf(long slot) {
        return (int) (slot - 1);
    }
}
