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

package org.appendlog.statebackend.index;

import org.appendlog.statebackend.memory.ArenaCompaction;
import org.appendlog.statebackend.memory.CacheWarmup;
import org.appendlog.statebackend.memory.HashSlots;
import org.appendlog.statebackend.memory.KeyBytes;

import javax.annotation.Nullable;

import java.util.Arrays;

/**
 * For the live entries of one key group: where each entry's latest record is (segment, batch,
 * position among the key group's record bytes) and its length, keyed by the entry's state and
 * serialized key and namespace (Bitcask's keydir, in arrays rather than objects, so that two
 * million entries cost the garbage collector a few arrays, not millions of objects). An
 * open-addressing table with linear probing ({@link HashSlots}) holds per slot the key's hash and
 * the entry's number; per entry number, arrays hold where its key bytes are in an arena and where
 * its record is. Key groups are indexed separately so that restore threads, which own disjoint key
 * groups, never contend; the lock per key group orders checkpoint writers and the compactor.
 */
final class KeyGroupIndex {

    private static final int FREE = -1;

    private final LogIndex.Segments segments;
    private long[] slots = new long[16];
    private int size;

    /** Entry numbers up to this have been used; freed ones are reused first. */
    private int entries;
    private int[] freed = new int[8];
    private int freedCount;
    private int[] keyAt = new int[8];
    /** Key bytes of the entry (with its state id in front), or {@link #FREE}. */
    private int[] keyLength = new int[8];
    private int[] segmentOf = new int[8];
    /** The record's batch, by its number in the segment ({@link SegmentStats#batchNumber}). */
    private int[] batchOf = new int[8];
    /** Where the record starts among the key group's record bytes of its batch. */
    private int[] positionOf = new int[8];
    private int[] recordLength = new int[8];

    private byte[] arena = new byte[256];
    private int arenaUsed;
    private int arenaGarbage;

    KeyGroupIndex(LogIndex.Segments segments) {
        this.segments = segments;
    }

    /** Bytes of the arrays that hold this key group's table, entries and key bytes. */
    synchronized long heapBytes() {
        int intArrays =
                freed.length
                        + keyAt.length
                        + keyLength.length
                        + segmentOf.length
                        + batchOf.length
                        + positionOf.length
                        + recordLength.length;
        return (long) slots.length * Long.BYTES + (long) intArrays * Integer.BYTES + arena.length;
    }

    /** The entry's latest record is {@code record} bytes at {@code at}; tombstone: gone. */
    void written(int state, byte[] key, int offset, int length, RecordAt at, boolean tombstone) {
        if (tombstone) {
            remove(state, key, offset, length);
        } else {
            put(state, key, offset, length, at);
        }
    }

    private synchronized void put(int state, byte[] key, int offset, int length, RecordAt at) {
        int hash = KeyBytes.hash(state, key, offset, length);
        int slot = find(hash, state, key, offset, length);
        if (slot >= 0) {
            relocate(entryOf(slots[slot]), at);
            return;
        }
        insert(hash, state, key, offset, length, at);
        segments.byId(at.segment).live(at.length);
    }

    /**
     * Restore reads records newest first: indexes the entry unless a newer record of it was read
     * before. Returns the new entry's number, or -1 if the entry is indexed already. Counts no
     * bytes; {@link IndexRebuild} counts them per thread.
     */
    synchronized int putIfAbsent(int state, byte[] key, int offset, int length, RecordAt at) {
        int hash = KeyBytes.hash(state, key, offset, length);
        if (find(hash, state, key, offset, length) >= 0) {
            return -1;
        }
        return insert(hash, state, key, offset, length, at);
    }

    /** Removes entry {@code entry}, which {@link #putIfAbsent} added, without counting bytes. */
    synchronized void forget(int entry) {
        int at = keyAt[entry];
        int state = ((arena[at] & 0xff) << 8) | (arena[at + 1] & 0xff);
        int length = keyLength[entry] - 2;
        int slot = find(KeyBytes.hash(state, arena, at + 2, length), state, arena, at + 2, length);
        freeEntry(slot, entry);
    }

    /** The entry's latest record is now the one at {@code at}. */
    private void relocate(int entry, RecordAt at) {
        segments.byId(segmentOf[entry]).died(recordLength[entry]);
        segments.byId(at.segment).live(at.length);
        place(entry, at);
    }

    private void place(int entry, RecordAt at) {
        segmentOf[entry] = at.segment;
        batchOf[entry] = at.batch;
        positionOf[entry] = at.position;
        recordLength[entry] = at.length;
    }

    synchronized void remove(int state, byte[] key, int offset, int length) {
        int slot = find(KeyBytes.hash(state, key, offset, length), state, key, offset, length);
        if (slot < 0) {
            return;
        }
        int entry = entryOf(slots[slot]);
        segments.byId(segmentOf[entry]).died(recordLength[entry]);
        freeEntry(slot, entry);
    }

    private void freeEntry(int slot, int entry) {
        deleteSlot(slot);
        size--;
        arenaGarbage += keyLength[entry];
        keyLength[entry] = FREE;
        if (freedCount == freed.length) {
            freed = Arrays.copyOf(freed, freedCount * 2);
        }
        freed[freedCount++] = entry;
        if (arenaGarbage > 4096 && arenaGarbage > arenaUsed / 2) {
            compactArena();
        }
    }

    /** Forgets every entry, whose records all die; keeps the arrays' capacity. */
    synchronized void clear() {
        for (int entry = 0; entry < entries; entry++) {
            if (keyLength[entry] != FREE) {
                segments.byId(segmentOf[entry]).died(recordLength[entry]);
            }
        }
        Arrays.fill(slots, 0L);
        size = 0;
        entries = 0;
        freedCount = 0;
        arenaUsed = 0;
        arenaGarbage = 0;
    }

    /** The segment number of the entry's latest record, or -1 if the entry is not live. */
    synchronized int latestSegment(int state, byte[] key, int offset, int length) {
        int slot = find(KeyBytes.hash(state, key, offset, length), state, key, offset, length);
        return slot < 0 ? -1 : segmentOf[entryOf(slots[slot])];
    }

    /**
     * Adds to {@code live} every entry whose latest record is in one of the pass's batches,
     * numbered as {@code pass} numbers them.
     */
    synchronized void collectLive(int keyGroup, CompactedBatches pass, RecordsToCopy live) {
        for (int entry = 0; entry < entries; entry++) {
            if (keyLength[entry] != FREE) {
                int batch = pass.numberOf(segmentOf[entry], batchOf[entry]);
                if (batch >= 0) {
                    live.add(keyGroup, entry, batch, positionOf[entry], recordLength[entry]);
                }
            }
        }
    }

    /**
     * Moves entry {@code entry} to its record's copy at {@code to} if its latest record is still
     * the one at ({@code segment}, {@code batch}, {@code position}): a record names its entry, so
     * a number freed and taken by another entry meanwhile is not moved. Returns whether it moved.
     */
    synchronized boolean moveIfStillAt(
            int entry, int segment, int batch, int position, RecordAt to) {
        if (entry < entries
                && keyLength[entry] != FREE
                && segmentOf[entry] == segment
                && batchOf[entry] == batch
                && positionOf[entry] == position) {
            relocate(entry, to);
            return true;
        }
        return false;
    }

    /**
     * Moves entry {@code entry} back to the record at {@code from} if it still points at run
     * {@code run}; else it had a newer record indexed, or was removed, or the table was cleared.
     */
    synchronized void moveBack(int entry, int run, RecordAt from) {
        if (entry < entries && keyLength[entry] != FREE && segmentOf[entry] == run) {
            relocate(entry, from);
        }
    }

    /** About to be probed {@code probes} times: reads the table into the cache if that pays. */
    synchronized void warmFor(int probes) {
        long tableBytes = (long) slots.length * Long.BYTES + (long) entries * 24 + arenaUsed;
        if (CacheWarmup.pays(probes, tableBytes)) {
            CacheWarmup.read(slots, slots.length);
            CacheWarmup.read(keyAt, entries);
            CacheWarmup.read(keyLength, entries);
            CacheWarmup.read(segmentOf, entries);
            CacheWarmup.read(batchOf, entries);
            CacheWarmup.read(positionOf, entries);
            CacheWarmup.read(recordLength, entries);
            CacheWarmup.read(arena, arenaUsed);
        }
    }

    synchronized int size() {
        return size;
    }

    /** Where the entry's latest record is, as "segment#batch@position", or null: for tests. */
    @Nullable
    synchronized String latestRecord(int state, byte[] key, int offset, int length) {
        int slot = find(KeyBytes.hash(state, key, offset, length), state, key, offset, length);
        if (slot < 0) {
            return null;
        }
        int entry = entryOf(slots[slot]);
        return segments.byId(segmentOf[entry]).segment()
                + "#"
                + batchOf[entry]
                + "@"
                + positionOf[entry];
    }

    // ------------------------------------------------------------------------

    /** The slot of the entry, or -1. */
    private int find(int hash, int state, byte[] key, int offset, int length) {
        int mask = slots.length - 1;
        for (int slot = hash & mask; slots[slot] != 0; slot = (slot + 1) & mask) {
            long occupant = slots[slot];
            if (HashSlots.hashOf(occupant) == hash && sameKey(entryOf(occupant), state, key, offset, length)) {
                return slot;
            }
        }
        return -1;
    }

    private boolean sameKey(int entry, int state, byte[] key, int offset, int length) {
        int at = keyAt[entry];
        return keyLength[entry] == length + 2
                && arena[at] == (byte) (state >>> 8)
                && arena[at + 1] == (byte) state
                && Arrays.equals(arena, at + 2, at + 2 + length, key, offset, offset + length);
    }

    private static int entryOf(long occupant) {
        return HashSlots.lowOf(occupant) - 1;
    }

    /** Backward-shift deletion: later slots of the probe run move up, so no tombstones remain. */
    private void deleteSlot(int hole) {
        int mask = slots.length - 1;
        int next = hole;
        while (true) {
            next = (next + 1) & mask;
            long occupant = slots[next];
            if (occupant == 0) {
                break;
            }
            int home = HashSlots.hashOf(occupant) & mask;
            boolean staysBehindHole =
                    hole <= next ? (hole < home && home <= next) : (hole < home || home <= next);
            if (!staysBehindHole) {
                slots[hole] = occupant;
                hole = next;
            }
        }
        slots[hole] = 0;
    }

    private int insert(int hash, int state, byte[] key, int offset, int length, RecordAt at) {
        int entry = newEntry(state, key, offset, length);
        place(entry, at);
        HashSlots.insert(slots, HashSlots.occupant(hash, entry + 1));
        if (++size > slots.length / 2) {
            slots = HashSlots.doubled(slots);
        }
        return entry;
    }

    private int newEntry(int state, byte[] key, int offset, int length) {
        int entry;
        if (freedCount > 0) {
            entry = freed[--freedCount];
        } else {
            entry = entries++;
            if (entry == keyAt.length) {
                int capacity = entry * 2;
                keyAt = Arrays.copyOf(keyAt, capacity);
                keyLength = Arrays.copyOf(keyLength, capacity);
                segmentOf = Arrays.copyOf(segmentOf, capacity);
                batchOf = Arrays.copyOf(batchOf, capacity);
                positionOf = Arrays.copyOf(positionOf, capacity);
                recordLength = Arrays.copyOf(recordLength, capacity);
            }
        }
        if (arenaUsed + length + 2 > arena.length) {
            arena = Arrays.copyOf(arena, Math.max(arena.length * 2, arenaUsed + length + 2));
        }
        keyAt[entry] = arenaUsed;
        keyLength[entry] = length + 2;
        arena[arenaUsed] = (byte) (state >>> 8);
        arena[arenaUsed + 1] = (byte) state;
        System.arraycopy(key, offset, arena, arenaUsed + 2, length);
        arenaUsed += length + 2;
        return entry;
    }

    /**
     * Moves the keys of live entries to the front of the arena, in place; like the table, the
     * arena keeps the size of the most entries it held, as entries come and go (window state does
     * so all the time).
     */
    private void compactArena() {
        arenaUsed = ArenaCompaction.compact(arena, keyAt, keyLength, entries);
        arenaGarbage = 0;
    }
}
