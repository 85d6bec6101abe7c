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
    static final int OFFSET_BITS = 18;
    /** Positions take 31 bits: at most this many chunks. */
    static final int MAX_CHUNKS = 1 << (31 - OFFSET_BITS);
    private static final int INITIAL_SLOTS = 1 << 12;

    /** Receives one record: its encoding is {@code buffer[offset, offset + length)}. */
    public interface RecordVisitor {
        void accept(byte[] buffer, int offset, int length);
    }

    /** Per partition of the key groups: its chunks, and the bytes used in each. */
    private final List<List<byte[]>> chunks;
    private final List<List<Integer>> used;
    private final int records;
    private final ChangeBuffer owner;

    BufferedChanges(
            List<List<byte[]>> chunks, List<List<Integer>> used, int records, ChangeBuffer owner) {
        this.chunks = chunks;
        this.used = used;
        this.records = records;
        this.owner = owner;
    }

    public int recordCount() {
        return records;
    }


    /**
     * Visits the latest record of every entry, in the order they were written. A slot of the table holds
     * the hash of the entry's key next to the record's position, so a probe reads the record's
     * bytes only when the hashes match; the table grows with the distinct entries, not the
     * records, to stay small enough for the cache.
     */
    public void forEachLatest(RecordVisitor visitor) {
        for (int p = 0; p < chunks.size(); p++) {
            forEachLatest(chunks.get(p), used.get(p), visitor);
        }
    }

    /** One partition: its table and records are small enough to stay in the cache. */
    private static void forEachLatest(
            List<byte[]> chunks, List<Integer> used, RecordVisitor visitor) {
        long[] slots = new long[INITIAL_SLOTS];
        int distinct = 0;
        for (int c = 0; c < chunks.size(); c++) {
            byte[] chunk = chunks.get(c);
            int end = used.get(c);
            int at = 0;
            while (at < end) {
                int keyLength = keyLength(chunk, at);
                int hash = hash(chunk, at, keyLength);
                long entry = ((long) hash << 32) | position(c, at);
                int mask = slots.length - 1;
                int slot = hash & mask;
                while (true) {
                    long occupant = slots[slot];
                    if (occupant == 0) {
                        slots[slot] = entry;
                        if (++distinct > slots.length / 2) {
                            slots = grow(slots);
                        }
                        break;
                    }
                    if ((int) (occupant >>> 32) == hash
                            && sameEntry(chunks, occupant, chunk, at, keyLength)) {
                        // Later records replace earlier ones of the same entry.
                        slots[slot] = entry;
                        break;
                    }
                    slot = (slot + 1) & mask;
                }
                int valueAt = keyOffset(at) + keyLength;
                at = valueAt + 4 + Math.max(0, readInt(chunk, valueAt));
            }
        }
        // In buffer order: the reads run through the chunks instead of jumping around them.
        long[] latest = new long[distinct];
        int n = 0;
        for (long slot : slots) {
            if (slot != 0) {
                latest[n++] = slot & 0xffffffffL;
            }
        }
        Arrays.sort(latest);
        for (long position : latest) {
            byte[] chunk = chunks.get(chunkOf(position));
            int at = offsetOf(position);
            visitor.accept(chunk, at, recordLength(chunk, at));
        }
    }

    private static long[] grow(long[] slots) {
        long[] grown = new long[slots.length * 2];
        int mask = grown.length - 1;
        for (long occupant : slots) {
            if (occupant != 0) {
                int slot = (int) (occupant >>> 32) & mask;
                while (grown[slot] != 0) {
                    slot = (slot + 1) & mask;
                }
                grown[slot] = occupant;
            }
        }
        return grown;
    }

    /** Returns the chunks to the buffer for reuse; no reads after this. */
    public void recycle() {
        chunks.forEach(partition -> partition.forEach(owner::recycle));
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

    private static boolean sameEntry(
            List<byte[]> chunks, long occupant, byte[] chunk, int at, int keyLength) {
        byte[] other = chunks.get(chunkOf(occupant));
        int otherAt = offsetOf(occupant);
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

    /**
     * A record's position in 31 bits, plus one so that a zero slot means empty: the chunk, and the
     * offset in it (below {@link ChangeBuffer#CHUNK_BYTES}; a chunk of a larger record holds only
     * that record).
     */
    private static long position(int chunk, int offset) {
        return (((long) chunk << OFFSET_BITS) | offset) + 1;
    }

    private static int chunkOf(long slot) {
        return (int) (((slot & 0xffffffffL) - 1) >>> OFFSET_BITS);
    }

    private static int offsetOf(long slot) {
        return (int) (((slot & 0xffffffffL) - 1) & ((1 << OFFSET_BITS) - 1));
    }
}
