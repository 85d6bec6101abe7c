package org.appendlog.statebackend.tracking;

import org.appendlog.statebackend.log.CacheWarmup;
import org.appendlog.statebackend.log.HashSlots;
import org.appendlog.statebackend.tracking.BufferedChanges.RecordVisitor;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The buffered writes of one partition of the key groups between two barriers, and a table of
 * each entry's latest record (like the offset map of Kafka's log cleaner). The background thread
 * copies each record of the task's chunks into the chunk of its partition ({@link #append}) and
 * puts a partition's chunk into the table as soon as it is full, so that at the barrier only the
 * last chunk of each partition is left to deduplicate and the checkpoint mostly just emits the
 * table. Guarded by the {@link BufferedChanges} it belongs to.
 *
 * <p>A slot of the table holds the hash of the entry's key next to the entry's number; per entry,
 * its identity (state id and key and namespace bytes) is copied once into a small arena, and the
 * position of its latest record is kept. A repeated write is matched against the arena, not
 * against its earlier record somewhere in the chunks: table and arena grow with the distinct
 * entries, not the records, and are small enough to be read into the processor's cache before
 * each chunk ({@link CacheWarmup}): the other partitions' chunks evict them in between.
 */
final class ChangePartition {

    private static final int INITIAL_SLOTS = 1 << 12;
    /**
     * Intervals in a row that may leave the table mostly empty before it is dropped: loads that
     * come and go (window state: a window's writes, then its removals) keep their tables.
     */
    private static final int SPARSE_INTERVALS_KEPT = 3;

    private final ChangeBuffer owner;
    /** Chunks in the table; positions refer to their order. */
    private final List<Chunk> chunks = new ArrayList<>();
    /** The chunk being filled, not in the table yet. */
    private final OpenChunk chunk = new OpenChunk();
    private long[] slots = new long[INITIAL_SLOTS];
    private int entries;
    private int[] identityAt = new int[INITIAL_SLOTS / 2];
    private int[] identityLength = new int[INITIAL_SLOTS / 2];
    private long[] latest = new long[INITIAL_SLOTS / 2];
    private byte[] arena = new byte[INITIAL_SLOTS * 8];
    private int arenaUsed;
    /** Intervals in a row that used less than an eighth of the table. */
    private int sparseIntervals;

    /** @param owner lends the chunks, and takes them back */
    ChangePartition(ChangeBuffer owner) {
        this.owner = owner;
    }

    /** Copies one encoded record of this partition into its chunk. */
    void append(byte[] record, int offset, int length) {
        if (!chunk.fits(length)) {
            putChunk();
            chunk.open(owner.takeChunk(length));
        }
        chunk.append(record, offset, length);
    }

    /** Puts the chunk being filled into the table. */
    private void putChunk() {
        Chunk filled = chunk.close(owner::recycle);
        if (filled == null) {
            return;
        }
        chunks.add(filled);
        if (CacheWarmup.pays(filled.records, tableBytes())) {
            CacheWarmup.read(slots, slots.length);
            CacheWarmup.read(identityAt, entries);
            CacheWarmup.read(identityLength, entries);
            CacheWarmup.read(latest, entries);
            CacheWarmup.read(arena, arenaUsed);
        }
        put(filled, chunks.size() - 1);
    }

    private long tableBytes() {
        return (long) slots.length * Long.BYTES + (long) entries * 16 + arenaUsed;
    }

    private void put(Chunk chunk, int c) {
        byte[] bytes = chunk.bytes;
        int at = 0;
        while (at < chunk.used) {
            int hash = BufferedChanges.hash(bytes, at);
            long position = BufferedChanges.position(c, at);
            int from = BufferedChanges.identityOffset(at);
            int to = from + BufferedChanges.identityLength(bytes, at);
            int mask = slots.length - 1;
            int slot = hash & mask;
            while (true) {
                long occupant = slots[slot];
                if (occupant == 0) {
                    slots[slot] = HashSlots.occupant(hash, newEntry(bytes, from, to, position) + 1);
                    if (entries > slots.length / 2) {
                        slots = HashSlots.doubled(slots);
                    }
                    break;
                }
                int entry = HashSlots.lowOf(occupant) - 1;
                if (HashSlots.hashOf(occupant) == hash
                        && Arrays.equals(
                                arena,
                                identityAt[entry],
                                identityAt[entry] + identityLength[entry],
                                bytes,
                                from,
                                to)) {
                    // Later records replace earlier ones of the same entry.
                    latest[entry] = position;
                    break;
                }
                slot = (slot + 1) & mask;
            }
            at += BufferedChanges.recordLength(bytes, at);
        }
    }

    private int newEntry(byte[] bytes, int from, int to, long position) {
        int entry = entries++;
        if (entry == latest.length) {
            identityAt = Arrays.copyOf(identityAt, entry * 2);
            identityLength = Arrays.copyOf(identityLength, entry * 2);
            latest = Arrays.copyOf(latest, entry * 2);
        }
        int length = to - from;
        if (arenaUsed + length > arena.length) {
            arena = Arrays.copyOf(arena, Math.max(arena.length * 2, arenaUsed + length));
        }
        System.arraycopy(bytes, from, arena, arenaUsed, length);
        identityAt[entry] = arenaUsed;
        identityLength[entry] = length;
        latest[entry] = position;
        arenaUsed += length;
        return entry;
    }

    /**
     * Visits the latest record of every entry, chunk by chunk in the order the chunks were
     * filled (so the reads run through the chunks instead of jumping around them). Only after
     * the last {@link #append}.
     */
    void forEachLatest(RecordVisitor visitor) {
        putChunk();
        // A counting sort of the latest positions by chunk, not a comparison sort: the reads run
        // through the chunks in order either way, and within one 32 KB chunk the order does not
        // matter to the cache.
        int[] firstOf = new int[chunks.size() + 1];
        for (int entry = 0; entry < entries; entry++) {
            firstOf[BufferedChanges.chunkOf(latest[entry]) + 1]++;
        }
        for (int c = 0; c < chunks.size(); c++) {
            firstOf[c + 1] += firstOf[c];
        }
        int[] offsets = new int[entries];
        int[] next = Arrays.copyOf(firstOf, chunks.size());
        for (int entry = 0; entry < entries; entry++) {
            long position = latest[entry];
            offsets[next[BufferedChanges.chunkOf(position)]++] = BufferedChanges.offsetOf(position);
        }
        for (int c = 0; c < chunks.size(); c++) {
            Chunk chunk = chunks.get(c);
            byte[] bytes = chunk.bytes;
            if (CacheWarmup.pays(firstOf[c + 1] - firstOf[c], chunk.used)) {
                CacheWarmup.read(bytes, chunk.used);
            }
            for (int i = firstOf[c]; i < firstOf[c + 1]; i++) {
                int at = offsets[i];
                visitor.accept(bytes, at, BufferedChanges.recordLength(bytes, at));
            }
        }
    }

    /**
     * Hands the chunks back for reuse and empties the partition. Returns whether its table is
     * worth reusing for a later interval: not once several intervals in a row left it mostly
     * empty, so that a burst of writes does not pin a large table for good.
     */
    boolean recycle() {
        Chunk open = chunk.close(owner::recycle);
        if (open != null) {
            owner.recycle(open.bytes);
        }
        chunks.forEach(c -> owner.recycle(c.bytes));
        chunks.clear();
        sparseIntervals = entries < slots.length / 8 ? sparseIntervals + 1 : 0;
        boolean reusable = slots.length == INITIAL_SLOTS || sparseIntervals < SPARSE_INTERVALS_KEPT;
        Arrays.fill(slots, 0L);
        entries = 0;
        arenaUsed = 0;
        return reusable;
    }
}
