package org.appendlog.statebackend.tracking;

import org.appendlog.statebackend.log.HashSlots;
import org.appendlog.statebackend.tracking.BufferedChanges.RecordVisitor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * The buffered writes of one partition of the key groups between two barriers, and a table of
 * each entry's latest record (like the offset map of Kafka's log cleaner). The task thread hands
 * over each chunk as it fills; a background thread puts the chunk's records into the table right
 * away ({@link #catchUp}), so that at the barrier only the last chunk is left to deduplicate and
 * the checkpoint mostly just emits the table.
 *
 * <p>A slot of the table holds the hash of the entry's key next to the record's position, so a
 * probe reads the record's bytes only when the hashes match; the table grows with the distinct
 * entries, not the records, to stay small enough for the cache.
 */
final class ChangePartition {

    private static final int INITIAL_SLOTS = 1 << 12;

    /** A filled chunk and the bytes used in it. */
    private static final class Chunk {
        final byte[] bytes;
        final int used;

        Chunk(byte[] bytes, int used) {
            this.bytes = bytes;
            this.used = used;
        }
    }

    /** Chunks the task thread handed over that are not in the table yet. */
    private final Queue<Chunk> filled = new ConcurrentLinkedQueue<>();

    // Guarded by this: whoever holds the lock catches up; positions refer to the chunks' order.
    private final List<Chunk> chunks = new ArrayList<>();
    private long[] slots = new long[INITIAL_SLOTS];
    private int distinct;

    /** Task thread: a chunk is full, or the barrier came; the chunk is not written any more. */
    void add(byte[] chunk, int used) {
        filled.add(new Chunk(chunk, used));
    }

    /** Puts the chunks handed over so far into the table. */
    synchronized void catchUp() {
        Chunk chunk;
        while ((chunk = filled.poll()) != null) {
            chunks.add(chunk);
            put(chunk, chunks.size() - 1);
        }
    }

    private void put(Chunk chunk, int c) {
        byte[] bytes = chunk.bytes;
        int at = 0;
        while (at < chunk.used) {
            int keyLength = BufferedChanges.keyLength(bytes, at);
            int hash = BufferedChanges.hash(bytes, at);
            long entry = HashSlots.occupant(hash, (int) BufferedChanges.position(c, at));
            int mask = slots.length - 1;
            int slot = hash & mask;
            while (true) {
                long occupant = slots[slot];
                if (occupant == 0) {
                    slots[slot] = entry;
                    if (++distinct > slots.length / 2) {
                        slots = HashSlots.doubled(slots);
                    }
                    break;
                }
                if (HashSlots.hashOf(occupant) == hash
                        && sameEntry(occupant, bytes, at, keyLength)) {
                    // Later records replace earlier ones of the same entry.
                    slots[slot] = entry;
                    break;
                }
                slot = (slot + 1) & mask;
            }
            at = BufferedChanges.valueOffset(bytes, at)
                    + Math.max(0, BufferedChanges.valueLength(bytes, at));
        }
    }

    private boolean sameEntry(long occupant, byte[] bytes, int at, int keyLength) {
        byte[] other = chunks.get(BufferedChanges.chunkOf(occupant)).bytes;
        int otherAt = BufferedChanges.offsetOf(occupant);
        return BufferedChanges.sameEntry(other, otherAt, bytes, at, keyLength);
    }

    /**
     * Visits the latest record of every entry, in the order they were written (so the reads run
     * through the chunks instead of jumping around them). Only after the last {@link #add}.
     */
    synchronized void forEachLatest(RecordVisitor visitor) {
        catchUp();
        long[] latest = new long[distinct];
        int n = 0;
        for (long slot : slots) {
            if (slot != 0) {
                latest[n++] = HashSlots.lowOf(slot);
            }
        }
        Arrays.sort(latest);
        for (long position : latest) {
            byte[] bytes = chunks.get(BufferedChanges.chunkOf(position)).bytes;
            int at = BufferedChanges.offsetOf(position);
            visitor.accept(bytes, at, BufferedChanges.recordLength(bytes, at));
        }
    }

    /** Hands the chunks back for reuse; the partition is empty afterwards. */
    synchronized void recycle(Consumer<byte[]> pool) {
        Chunk chunk;
        while ((chunk = filled.poll()) != null) {
            pool.accept(chunk.bytes);
        }
        chunks.forEach(c -> pool.accept(c.bytes));
        chunks.clear();
        slots = new long[INITIAL_SLOTS];
        distinct = 0;
    }
}
