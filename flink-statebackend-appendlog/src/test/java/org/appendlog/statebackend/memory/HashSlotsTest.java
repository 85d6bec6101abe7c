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

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Colliding and wrapping probe runs survive insertion and growth. */
class HashSlotsTest {

    @Test
    void occupantsKeepHashAndLowHalfAcrossGrowth() {
        long[] table = new long[8];
        List<Integer> lastSlotHashes = hashesWithHome(7, 8, 3);
        // Three hashes share home slot 7 of 8: the run wraps around to slots 0 and 1.
        HashSlots.insert(table, HashSlots.occupant(lastSlotHashes.get(0), 1));
        HashSlots.insert(table, HashSlots.occupant(lastSlotHashes.get(1), 2));
        HashSlots.insert(table, HashSlots.occupant(lastSlotHashes.get(2), -5));
        assertThat(HashSlots.hashOf(table[7])).isEqualTo(lastSlotHashes.get(0));
        assertThat(HashSlots.lowOf(table[0])).isEqualTo(2);
        assertThat(HashSlots.hashOf(table[1])).isEqualTo(lastSlotHashes.get(2));
        assertThat(HashSlots.lowOf(table[1])).isEqualTo(-5);

        long[] grown = HashSlots.grown(table);
        assertThat(grown).hasSize(LinearProbing.grown(8));
        assertThat(Arrays.stream(grown).filter(o -> o != 0).count()).isEqualTo(3);
        for (long occupant : table) {
            if (occupant != 0) {
                assertThat(probe(grown, HashSlots.hashOf(occupant))).contains(occupant);
            }
        }
    }

    @Test
    void homeSlotsSpreadOverATableOfAnyLength() {
        for (int length : new int[] {16, 21, 27, 1000, 1 << 20}) {
            int[] perSlot = new int[length];
            for (int key = 0; key < length * 4; key++) {
                int home = LinearProbing.home(KeyBytes.hash(0, bytes(key), 0, 4), length);
                assertThat(home).isBetween(0, length - 1);
                perSlot[home]++;
            }
            // Four keys per slot on average: no slot draws many times that.
            assertThat(Arrays.stream(perSlot).max().getAsInt()).as("length %d", length).isLessThan(24);
        }
    }

    private static List<Integer> hashesWithHome(int home, int length, int count) {
        List<Integer> hashes = new ArrayList<>();
        for (int hash = 1; hashes.size() < count; hash++) {
            if (LinearProbing.home(hash, length) == home) {
                hashes.add(hash);
            }
        }
        return hashes;
    }

    /** The occupants of the probe run of {@code hash}. */
    private static List<Long> probe(long[] table, int hash) {
        List<Long> run = new ArrayList<>();
        for (int slot = LinearProbing.home(hash, table.length);
                table[slot] != 0;
                slot = LinearProbing.next(slot, table.length)) {
            run.add(table[slot]);
        }
        return run;
    }

    private static byte[] bytes(int key) {
        return new byte[] {(byte) (key >>> 24), (byte) (key >>> 16), (byte) (key >>> 8), (byte) key};
    }
}
