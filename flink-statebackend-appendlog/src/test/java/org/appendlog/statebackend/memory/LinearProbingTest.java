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

/** Probe runs in tables of any length: spread, wrapping, growing. */
class LinearProbingTest {

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

    @Test
    void aRunFromTheLastSlotWrapsAroundAndGrowsAtSeventyPercent() {
        int length = 21;
        List<Integer> hashes = new ArrayList<>();
        for (int hash = 1; hashes.size() < 3; hash++) {
            if (LinearProbing.home(hash, length) == length - 1) {
                hashes.add(hash);
            }
        }
        int mask = TaggedSlots.entryMask(20);
        int[] table = new int[length];
        for (int entry = 0; entry < 3; entry++) {
            TaggedSlots.insert(table, hashes.get(entry), TaggedSlots.occupant(hashes.get(entry), entry, mask));
        }
        assertThat(TaggedSlots.entryOf(table[length - 1], mask)).isEqualTo(0);
        assertThat(TaggedSlots.entryOf(table[0], mask)).isEqualTo(1);
        assertThat(TaggedSlots.entryOf(table[1], mask)).isEqualTo(2);
        assertThat(LinearProbing.next(length - 1, length)).isZero();

        assertThat(LinearProbing.overfull(14, 21)).isFalse();
        assertThat(LinearProbing.overfull(15, 21)).isTrue();
    }

    private static byte[] bytes(int key) {
        return new byte[] {(byte) (key >>> 24), (byte) (key >>> 16), (byte) (key >>> 8), (byte) key};
    }
}
