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
import org.appendlog.statebackend.memory.ArrayGrowth;
import org.appendlog.statebackend.memory.CacheWarmup;
import org.appendlog.statebackend.memory.KeyBytes;
import org.appendlog.statebackend.memory.LinearProbing;
import org.appendlog.statebackend.memory.TaggedSlots;

import javax.annotation.Nullable;

import java.util.Arrays;

/**
 * For the live entries of one key group: where each entry's latest record is (segment, batch,
 * position among the key group's record bytes) and its length, keyed by the entry's state and
 * serialized key and namespace (Bitcask's keydir, in arrays rather than objects, so that two
 * million entries cost the garbage collector a few arrays, not millions of objects). An
 * open-addressing table with linear probing holds per slot the entry's number; per entry number,
 * arrays hold where its key bytes are in an arena and where its record is. Key groups are indexed
 * separately so that restore threads, which own disjoint key groups, never contend; the lock per
 * key group orders checkpoint writers and the compactor.
 *
 * <p>Every byte here is per live entry, on top of what the heap state holds, so the layout is
 * tight: the table's slots are ints that tag an entry number with a few bits of the hash ({@link
 * TaggedSlots}), the table is kept fuller than half ({@link LinearProbing}), a record's place takes
 * only the bytes its numbers need ({@link RecordPlaces}), and the table and the arrays grow by a
 * quarter, not double.
 */
final class KeyGroupIndex {

    private static final int FREE = -1;
    /** Entry numbers in a slot start at this many bits, and take more as entries grow. */
    private static final int INITIAL_ENTRY_BITS = 20;

    private final LogIndex.Segments segments;
    private int[] slots = new int[LinearProbing.MIN_SLOTS];
    private int entryBits = INITIAL_ENTRY_BITS;
    private int entryMask = TaggedSlots.entryMask(INITIAL_ENTRY_BITS);
    private int size;

    /** Entry numbers up to this have been used; freed ones are reused first. */
    private int entries;
    private int[] freed = new int[8];
    private int freedCount;
    /**
     * Where the entry's key is in the arena, or {@link #FREE}: its length (a varint, counting the
     * state id), then its state id (two bytes), then its serialized key and namespace.
     */
    private int[] keyAt = new int[8];
    /**
     * Where the entry's latest record is: its batch by number in the segment ({@link
     * SegmentStats#batchNumber}), where it starts among the key group's record bytes there.
     */
    private final RecordPlaces places = new RecordPlaces(8);

    private byte[] arena = new byte[256];
    private int arenaUsed;
    private int arenaGarbage;

    KeyGroupIndex(LogIndex.Segments segments) {
        this.segments = segments;
    }

    /** Bytes of the arrays that hold this key group's table, entries and key bytes. */
    synchronized long heapBytes() {
        return (long) (slots.length + freed.length + keyAt.length) * Integer.BYTES
                + places.heapBytes()
                + arena.length;
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
        int at = identityAt(entry);
        int state = stateAt(at);
        int length = identityLength(entry) - 2;
        int slot = find(hashOf(entry), state, arena, at + 2, length);
        freeEntry(slot, entry);
    }

    /** The entry's latest record is now the one at {@code at}. */
    private void relocate(int entry, RecordAt at) {
        died(entry);
        segments.byId(at.segment).live(at.length);
        places.set(entry, at);
    }

    /** The entry's record no longer counts as live in its segment. */
    private void died(int entry) {
        segments.byId(places.segment(entry)).died(places.length(entry));
    }

    synchronized void remove(int state, byte[] key, int offset, int length) {
        int slot = find(KeyBytes.hash(state, key, offset, length), state, key, offset, length);
        if (slot < 0) {
            return;
        }
        int entry = entryOf(slots[slot]);
        died(entry);
        freeEntry(slot, entry);
    }

    private void freeEntry(int slot, int entry) {
        deleteSlot(slot);
        size--;
        arenaGarbage += sliceLength(entry);
        keyAt[entry] = FREE;
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
            if (keyAt[entry] != FREE) {
                died(entry);
            }
        }
        Arrays.fill(slots, 0);
        size = 0;
        entries = 0;
        freedCount = 0;
        arenaUsed = 0;
        arenaGarbage = 0;
    }

    /** The segment number of the entry's latest record, or -1 if the entry is not live. */
    synchronized int latestSegment(int state, byte[] key, int offset, int length) {
        int slot = find(KeyBytes.hash(state, key, offset, length), state, key, offset, length);
        return slot < 0 ? -1 : places.segment(entryOf(slots[slot]));
    }

    /**
     * Adds to {@code live} every entry whose latest record is in one of the pass's batches,
     * numbered as {@code pass} numbers them.
     */
    synchronized void collectLive(int keyGroup, CompactedBatches pass, RecordsToCopy live) {
        for (int entry = 0; entry < entries; entry++) {
            if (keyAt[entry] != FREE) {
                int batch = pass.numberOf(places.segment(entry), places.batch(entry));
                if (batch >= 0) {
                    live.add(
                            keyGroup, entry, batch, places.position(entry), places.length(entry));
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
                && keyAt[entry] != FREE
                && places.isAt(entry, segment, batch, position)) {
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
        if (entry < entries && keyAt[entry] != FREE && places.segment(entry) == run) {
            relocate(entry, from);
        }
    }

    /** About to be probed {@code probes} times: reads the table into the cache if that pays. */
    synchronized void warmFor(int probes) {
        long tableBytes =
                (long) (slots.length + entries) * Integer.BYTES + places.bytesOf(entries) + arenaUsed;
        if (CacheWarmup.pays(probes, tableBytes)) {
            CacheWarmup.read(slots, slots.length);
            CacheWarmup.read(keyAt, entries);
            places.warm(entries);
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
        return segments.byId(places.segment(entry)).segment()
                + "#"
                + places.batch(entry)
                + "@"
                + places.position(entry);
    }

    // ------------------------------------------------------------------------

    /** The slot of the entry, or -1. */
    private int find(int hash, int state, byte[] key, int offset, int length) {
        for (int slot = LinearProbing.home(hash, slots.length);
                slots[slot] != 0;
                slot = LinearProbing.next(slot, slots.length)) {
            int occupant = slots[slot];
            if (TaggedSlots.tagMatches(occupant, hash, entryMask)
                    && sameKey(entryOf(occupant), state, key, offset, length)) {
                return slot;
            }
        }
        return -1;
    }

    /** The hash of the entry's key, from its bytes in the arena: slots keep only part of it. */
    private int hashOf(int entry) {
        int at = identityAt(entry);
        return KeyBytes.hash(stateAt(at), arena, at + 2, identityLength(entry) - 2);
    }

    private boolean sameKey(int entry, int state, byte[] key, int offset, int length) {
        if (identityLength(entry) != length + 2) {
            return false;
        }
        int at = identityAt(entry);
        return arena[at] == (byte) (state >>> 8)
                && arena[at + 1] == (byte) state
                && Arrays.equals(arena, at + 2, at + 2 + length, key, offset, offset + length);
    }

    private int entryOf(int occupant) {
        return TaggedSlots.entryOf(occupant, entryMask);
    }

    /** Backward-shift deletion: later slots of the probe run move up, so no tombstones remain. */
    private void deleteSlot(int hole) {
        int next = hole;
        while (true) {
            next = LinearProbing.next(next, slots.length);
            int occupant = slots[next];
            if (occupant == 0) {
                break;
            }
            int home = LinearProbing.home(hashOf(entryOf(occupant)), slots.length);
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
        places.set(entry, at);
        boolean full = LinearProbing.overfull(++size, slots.length);
        // A number too large for the slots' entry bits takes one bit more from the tags.
        boolean widened = entry + 1 > entryMask;
        if (widened) {
            entryBits++;
            entryMask = TaggedSlots.entryMask(entryBits);
        }
        if (full || widened) {
            rebuildSlots(full ? ArrayGrowth.byAQuarter(slots.length, 0) : slots.length);
        } else {
            TaggedSlots.insert(slots, hash, TaggedSlots.occupant(hash, entry, entryMask));
        }
        return entry;
    }

    /**
     * Puts every live entry into a new table of {@code length} slots, hashing the keys again in
     * the order of the entries, which is about that of their bytes in the arena.
     */
    private void rebuildSlots(int length) {
        slots = new int[length];
        for (int entry = 0; entry < entries; entry++) {
            if (keyAt[entry] != FREE) {
                int hash = hashOf(entry);
                TaggedSlots.insert(slots, hash, TaggedSlots.occupant(hash, entry, entryMask));
            }
        }
    }

    private int newEntry(int state, byte[] key, int offset, int length) {
        int entry;
        if (freedCount > 0) {
            entry = freed[--freedCount];
        } else {
            entry = entries++;
            if (entry == keyAt.length) {
                int capacity = ArrayGrowth.byAQuarter(entry, 0);
                keyAt = Arrays.copyOf(keyAt, capacity);
                places.grow(capacity);
            }
        }
        int identity = length + 2;
        int slice = lengthBytes(identity) + identity;
        if (arenaUsed + slice > arena.length) {
            arena = Arrays.copyOf(arena, ArrayGrowth.byAQuarter(arena.length, (long) arenaUsed + slice));
        }
        keyAt[entry] = arenaUsed;
        int at = arenaUsed;
        for (int rest = identity; ; rest >>>= 7) {
            if (rest < 0x80) {
                arena[at++] = (byte) rest;
                break;
            }
            arena[at++] = (byte) (rest | 0x80);
        }
        arena[at] = (byte) (state >>> 8);
        arena[at + 1] = (byte) state;
        System.arraycopy(key, offset, arena, at + 2, length);
        arenaUsed += slice;
        return entry;
    }

    /** The length of the entry's state id and key bytes, from the varint in front of them. */
    private int identityLength(int entry) {
        int at = keyAt[entry];
        int length = 0;
        for (int shift = 0; ; shift += 7) {
            byte b = arena[at++];
            length |= (b & 0x7f) << shift;
            if (b >= 0) {
                return length;
            }
        }
    }

    /** Where the entry's state id, then its key bytes, are in the arena. */
    private int identityAt(int entry) {
        return keyAt[entry] + lengthBytes(identityLength(entry));
    }

    private int stateAt(int at) {
        return ((arena[at] & 0xff) << 8) | (arena[at + 1] & 0xff);
    }

    /** The entry's bytes in the arena: its length, state id and key. */
    private int sliceLength(int entry) {
        int identity = identityLength(entry);
        return lengthBytes(identity) + identity;
    }

    /** Bytes of the varint that holds {@code length}. */
    private static int lengthBytes(int length) {
        int bytes = 1;
        for (int rest = length >>> 7; rest != 0; rest >>>= 7) {
            bytes++;
        }
        return bytes;
    }

    /**
     * Moves the keys of live entries to the front of the arena, in place; like the table, the
     * arena keeps the size of the most entries it held, as entries come and go (window state does
     * so all the time).
     */
    private void compactArena() {
        arenaUsed =
                ArenaCompaction.compact(
                        arena, keyAt, entry -> keyAt[entry] == FREE ? 0 : sliceLength(entry), entries);
        arenaGarbage = 0;
    }
}
