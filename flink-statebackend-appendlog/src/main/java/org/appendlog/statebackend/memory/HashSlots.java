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
 * The slots of the open-addressing tables that find entries by {@link KeyBytes#hash} without an
 * object per entry: one long per slot, the key's hash in the high half and what the table keeps
 * (an entry number or a record position, never 0) in the low half; 0 marks a free slot. Linear
 * probing; a table has a power-of-two length and is kept at most half full.
 */
public final class HashSlots {

    private HashSlots() {}

    public static long occupant(int hash, int low) {
        return ((long) hash << 32) | (low & 0xffffffffL);
    }

    public static int hashOf(long occupant) {
        return (int) (occupant >>> 32);
    }

    public static int lowOf(long occupant) {
        return (int) occupant;
    }

    /** Puts {@code occupant} into the first free slot of its probe run. */
    public static void insert(long[] table, long occupant) {
        int mask = table.length - 1;
        int slot = hashOf(occupant) & mask;
        while (table[slot] != 0) {
            slot = (slot + 1) & mask;
        }
        table[slot] = occupant;
    }

    /** A table of twice the length holding the occupants of {@code table}. */
    public static long[] doubled(long[] table) {
        long[] grown = new long[table.length * 2];
        for (long occupant : table) {
            if (occupant != 0) {
                insert(grown, occupant);
            }
        }
        return grown;
    }
}
