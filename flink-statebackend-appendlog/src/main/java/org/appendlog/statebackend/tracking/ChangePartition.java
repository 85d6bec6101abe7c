/*
 * Copyright AppendLog contributors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

package org.appendlog.statebackend.tracking;

import org.appendlog.statebackend.memory.ArenaCompaction;
import org.appendlog.statebackend.memory.ArrayGrowth;
import org.appendlog.statebackend.memory.CacheWarmup;
import org.appendlog.statebackend.memory.HashSlots;
import org.appendlog.statebackend.tracking.IntervalWrites.RecordVisitor;

import java.util.Arrays;

/**
 * The latest record of each entry that one partition of the key groups wrote between two
 * barriers (like the offset map of Kafka's log cleaner, but holding the records themselves). The
 * background thread copies each record of the task's chunks into the chunk of its partition
 * ({@link #append}) and puts a partition's chunk into the table as soon as it is full, then hands
 * the chunk back: at the barrier only the last chunk of each partition is left to put, and the
 * checkpoint just emits the table. Guarded by the {@link IntervalWrites} it belongs to.
 *
 * <p>A slot of the table holds the hash of the entry's key next to the entry's number; per entry,
 * its latest record is kept in an arena. A repeated write is matched against that record's
 * identity (state id and key and namespace bytes) and replaces it, in place if it has the same
 * length (a counter's next value). So the partition holds the interval's distinct entries, not
 * its writes, and the chunks go back at once instead of staying until the barrier as fresh memory
 * that competes with the task thread's state for the cache the cores share. Table and arena are
 * small enough to be read into the processor's cache before each chunk ({@link CacheWarmup}): the
 * other partitions' chunks evict them in between.
 */
final class ChangePartition {

    /**
     * Tables start small, since most intervals of most jobs write few entries per partition; a
     * busy one doubles them a few times more, on the background thread.
     */
    private static final int INITIAL_SLOTS = 1 << 8;
    private static final int INITIAL_ARENA_BYTES = INITIAL_SLOTS * 16;
    private static final int UNLINKED = -1;

    private final ChangeBuffer owner;
    /** The chunk being filled, not in the table yet. */
    private final OpenChunk chunk = new OpenChunk();
    private long[] slots = new long[INITIAL_SLOTS];
    private int entries;
    /** Where each entry's latest record is in the arena, or {@link #UNLINKED} while it is stored. */
    private int[] recordAt = new int[INITIAL_SLOTS / 2];
    private byte[] arena = new byte[INITIAL_ARENA_BYTES];
    private int arenaUsed;
    /** Bytes of records that later ones of other lengths replaced. */
    private int arenaGarbage;

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

    /** Puts the chunk being filled into the table and hands the chunk back. */
    private void putChunk() {
        Chunk filled = chunk.close(owner::recycle);
        if (filled == null) {
            return;
        }
        if (CacheWarmup.pays(filled.records, tableBytes())) {
            CacheWarmup.read(slots, slots.length);
            CacheWarmup.read(recordAt, entries);
            CacheWarmup.read(arena, arenaUsed);
        }
        put(filled.bytes, filled.used);
        owner.recycle(filled.bytes);
    }

    private long tableBytes() {
        return (long) slots.length * Long.BYTES + (long) entries * Integer.BYTES + arenaUsed;
    }

    private void put(byte[] bytes, int used) {
        int at = 0;
        while (at < used) {
            int length = IntervalWrites.recordLength(bytes, at);
            int hash = IntervalWrites.hash(bytes, at);
            int from = IntervalWrites.identityOffset(at);
            int identity = IntervalWrites.identityLength(bytes, at);
            int mask = slots.length - 1;
            int slot = hash & mask;
            while (true) {
                long occupant = slots[slot];
                if (occupant == 0) {
                    slots[slot] = HashSlots.occupant(hash, newEntry(bytes, at, length) + 1);
                    if (entries > slots.length / 2) {
                        slots = HashSlots.doubled(slots);
                    }
                    break;
                }
                int entry = HashSlots.lowOf(occupant) - 1;
                if (HashSlots.hashOf(occupant) == hash
                        && sameIdentity(entry, bytes, from, identity)) {
                    // Later records replace earlier ones of the same entry.
                    replace(entry, bytes, at, length);
                    break;
                }
                slot = (slot + 1) & mask;
            }
            at += length;
        }
    }

    private boolean sameIdentity(int entry, byte[] bytes, int from, int identity) {
        int at = recordAt[entry];
        int stored = IntervalWrites.identityOffset(at);
        return IntervalWrites.identityLength(arena, at) == identity
                && Arrays.equals(arena, stored, stored + identity, bytes, from, from + identity);
    }

    private int newEntry(byte[] bytes, int at, int length) {
        int entry = entries++;
        if (entry == recordAt.length) {
            recordAt = Arrays.copyOf(recordAt, ArrayGrowth.byAQuarter(entry, 0));
        }
        storeRecord(entry, bytes, at, length);
        return entry;
    }

    private void replace(int entry, byte[] bytes, int at, int length) {
        int replaced = storedLength(entry);
        if (replaced == length) {
            System.arraycopy(bytes, at, arena, recordAt[entry], length);
            return;
        }
        arenaGarbage += replaced;
        storeRecord(entry, bytes, at, length);
    }

    /** Makes a copy of the record at the end of the arena the entry's latest record. */
    private void storeRecord(int entry, byte[] bytes, int at, int length) {
        // Unlinked first, so that compacting the arena to make room passes the entry by: its
        // record is replaced, or not stored yet.
        recordAt[entry] = UNLINKED;
        recordAt[entry] = store(bytes, at, length);
    }

    /** Copies a record to the end of the arena; returns where. */
    private int store(byte[] bytes, int at, int length) {
        if (arenaUsed + length > arena.length) {
            makeRoom(length);
        }
        int stored = arenaUsed;
        System.arraycopy(bytes, at, arena, stored, length);
        arenaUsed += length;
        return stored;
    }

    /**
     * Compacts the arena in place if replaced records take half of it, or else grows it by a
     * quarter: it holds the interval's records, as many bytes as the heap state changed.
     */
    private void makeRoom(int length) {
        if (arenaGarbage >= arenaUsed / 2 && arenaUsed - arenaGarbage + length <= arena.length) {
            compactArena();
        } else {
            arena = Arrays.copyOf(arena, ArrayGrowth.byAQuarter(arena.length, (long) arenaUsed + length));
        }
    }

    private void compactArena() {
        arenaUsed = ArenaCompaction.compact(arena, recordAt, this::storedLength, entries);
        arenaGarbage = 0;
    }

    /** The length of the entry's latest record, read from it; 0 while it is unlinked. */
    private int storedLength(int entry) {
        int at = recordAt[entry];
        return at == UNLINKED ? 0 : IntervalWrites.recordLength(arena, at);
    }

    /** Bytes of the table and the arena. */
    long heapBytes() {
        return (long) slots.length * Long.BYTES + (long) recordAt.length * Integer.BYTES + arena.length;
    }

    /**
     * Distinct entries at most: those in the table, and each record not in it yet counted as one.
     */
    int entriesAtMost() {
        return entries + chunk.records();
    }

    /** Distinct entries at least: those in the table. */
    int entriesAtLeast() {
        return entries;
    }

    /** Puts the open chunk into the table and counts the entries. After the last {@link #append}. */
    int countEntries() {
        putChunk();
        return entries;
    }

    /** Visits the latest record of every entry. Only after the last {@link #append}. */
    void forEachLatest(RecordVisitor visitor) {
        putChunk();
        for (int entry = 0; entry < entries; entry++) {
            visitor.accept(arena, recordAt[entry], storedLength(entry));
        }
    }

    /** Hands the chunk back; the partition is not used after this. */
    void recycle() {
        Chunk open = chunk.close(owner::recycle);
        if (open != null) {
            owner.recycle(open.bytes);
        }
    }
}
