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

package org.appendlog.statebackend.memory;

/**
 * The slots of an open-addressing table of entry numbers, one int per slot: the entry's number
 * plus one in the low {@code entryBits} bits, and the top bits of its key's hash as a tag, which
 * turns away most other keys without reading theirs; 0 marks a free slot. Half the bytes of
 * {@link HashSlots}, which keep the whole hash: an entry's home slot is not in its slot, so the
 * table's owner hashes the entry's key again to grow the table or to delete from it. Probe runs
 * as {@link LinearProbing} lays them out.
 */
public final class TaggedSlots {

    private TaggedSlots() {}

    /** The mask of the slot bits that hold the entry number. */
    public static int entryMask(int entryBits) {
        return entryBits >= 31 ? Integer.MAX_VALUE : (1 << entryBits) - 1;
    }

    public static int occupant(int hash, int entry, int entryMask) {
        return (hash & ~entryMask) | (entry + 1);
    }

    public static int entryOf(int occupant, int entryMask) {
        return (occupant & entryMask) - 1;
    }

    /** Whether the occupant's tag is that of {@code hash}: its entry may have the key. */
    public static boolean tagMatches(int occupant, int hash, int entryMask) {
        return ((occupant ^ hash) & ~entryMask) == 0;
    }

    /**
     * Puts {@code occupant}, whose key hashes to {@code hash}, into the first free slot of its
     * probe run.
     */
    public static void insert(int[] table, int hash, int occupant) {
        int slot = LinearProbing.home(hash, table.length);
        while (table[slot] != 0) {
            slot = LinearProbing.next(slot, table.length);
        }
        table[slot] = occupant;
    }
}
