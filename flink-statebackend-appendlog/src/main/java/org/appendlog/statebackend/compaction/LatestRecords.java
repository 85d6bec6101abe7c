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

package org.appendlog.statebackend.compaction;

import org.appendlog.statebackend.memory.HashSlots;
import org.appendlog.statebackend.memory.KeyBytes;

import java.util.Arrays;

/**
 * Per entry (state and serialized key and namespace), where its latest record is among the
 * records offered: the one with the highest checkpoint id, of equal ones the last offered.
 * Compaction deduplicates a key group's tombstones with it while walking them where they were
 * read.
 * Like the index's key group table it is an open-addressing table ({@link HashSlots}) over
 * arrays, so that offering a record allocates nothing; it copies no keys either, it points into
 * the bytes they were read from. Entries are numbered in the order they were first offered.
 */
final class LatestRecords {

    /** Per slot: the key's hash and the entry's number + 1. */
    private long[] slots = new long[16];
    private int size;

    private int[] state = new int[8];
    private byte[][] keyBytes = new byte[8][];
    private int[] keyOffset = new int[8];
    private int[] keyLength = new int[8];
    private long[] checkpointId = new long[8];
    private long[] position = new long[8];

    /**
     * Offers the record at {@code position} (any number the caller can find it by) of the entry
     * whose key is {@code key[offset, offset + length)}, written by checkpoint {@code
     * checkpointId}.
     */
    void offer(int state, byte[] key, int offset, int length, long checkpointId, long position) {
        int hash = KeyBytes.hash(state, key, offset, length);
        int slot = find(hash, state, key, offset, length);
        if (slot >= 0) {
            int entry = entryOf(slots[slot]);
            if (checkpointId >= this.checkpointId[entry]) {
                this.checkpointId[entry] = checkpointId;
                this.position[entry] = position;
            }
            return;
        }
        int entry = size;
        if (entry == this.state.length) {
            grow();
        }
        this.state[entry] = state;
        keyBytes[entry] = key;
        keyOffset[entry] = offset;
        keyLength[entry] = length;
        this.checkpointId[entry] = checkpointId;
        this.position[entry] = position;
        HashSlots.insert(slots, HashSlots.occupant(hash, entry + 1));
        if (++size > slots.length / 2) {
            slots = HashSlots.doubled(slots);
        }
    }

    /** The number of entries; they are numbered from 0. */
    int size() {
        return size;
    }

    int state(int entry) {
        return state[entry];
    }

    /** The position of the entry's latest record. */
    long position(int entry) {
        return position[entry];
    }

    /** Forgets every entry; keeps the arrays for the next key group. */
    void clear() {
        if (size > 0) {
            Arrays.fill(slots, 0);
            Arrays.fill(keyBytes, 0, size, null);
            size = 0;
        }
    }

    // ------------------------------------------------------------------------

    /** The slot of the entry, or -1. */
    private int find(int hash, int state, byte[] key, int offset, int length) {
        int mask = slots.length - 1;
        for (int slot = hash & mask; slots[slot] != 0; slot = (slot + 1) & mask) {
            long occupant = slots[slot];
            if (HashSlots.hashOf(occupant) == hash) {
                int entry = entryOf(occupant);
                int at = keyOffset[entry];
                if (this.state[entry] == state
                        && keyLength[entry] == length
                        && Arrays.equals(
                                keyBytes[entry], at, at + length, key, offset, offset + length)) {
                    return slot;
                }
            }
        }
        return -1;
    }

    private static int entryOf(long occupant) {
        return HashSlots.lowOf(occupant) - 1;
    }

    private void grow() {
        int capacity = state.length * 2;
        state = Arrays.copyOf(state, capacity);
        keyBytes = Arrays.copyOf(keyBytes, capacity);
        keyOffset = Arrays.copyOf(keyOffset, capacity);
        keyLength = Arrays.copyOf(keyLength, capacity);
        checkpointId = Arrays.copyOf(checkpointId, capacity);
        position = Arrays.copyOf(position, capacity);
    }
}
