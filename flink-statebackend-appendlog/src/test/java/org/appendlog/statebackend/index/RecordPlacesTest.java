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

import org.junit.jupiter.api.Test;

import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

class RecordPlacesTest {

    /**
     * Places of every width, written in an order that widens each kind of number several times
     * (segment last, so that its widening copies places of every other width): each entry reads
     * back exactly the place it was given.
     */
    @Test
    void everyPlaceReadsBackAcrossWidenings() {
        int entries = 5_000;
        RecordPlaces places = new RecordPlaces(8);
        int[][] given = new int[entries][];
        Random random = new Random(43);
        int capacity = 8;
        for (int entry = 0; entry < entries; entry++) {
            if (entry == capacity) {
                capacity *= 2;
                places.grow(capacity);
            }
            int bits = 1 + entry * 30 / entries; // 1 to 30 bits, growing with the entry number
            int[] place = new int[4];
            for (int kind = 0; kind < 4; kind++) {
                place[kind] = random.nextInt(1 << bits);
            }
            place[0] = entry < entries - 10 ? random.nextInt(200) : Integer.MAX_VALUE - entry;
            if (entry == entries - 1) {
                place[3] = Integer.MAX_VALUE;
            }
            given[entry] = place;
            places.set(entry, new RecordAt().set(place[0], place[1], place[2], place[3]));
        }
        for (int entry = 0; entry < entries; entry++) {
            assertThat(
                            new int[] {
                                places.segment(entry),
                                places.batch(entry),
                                places.position(entry),
                                places.length(entry)
                            })
                    .as("entry %d", entry)
                    .containsExactly(given[entry]);
        }
        assertThat(places.isAt(7, given[7][0], given[7][1], given[7][2])).isTrue();
        assertThat(places.isAt(7, given[7][0], given[7][1], given[7][2] + 1)).isFalse();
    }

    /** Small numbers take a byte each; one large length widens lengths alone, for every entry. */
    @Test
    void aPlaceTakesTheBytesItsLargestNumbersNeed() {
        RecordPlaces places = new RecordPlaces(1_000);
        for (int entry = 0; entry < 1_000; entry++) {
            places.set(entry, new RecordAt().set(3, 2, entry % 200, 30));
        }
        assertThat(places.heapBytes()).isEqualTo(4 * 1_000);
        places.set(999, new RecordAt().set(3, 2, 1, 70_000));
        assertThat(places.heapBytes()).isEqualTo(6 * 1_000);
        assertThat(places.length(0)).isEqualTo(30);
        assertThat(places.length(999)).isEqualTo(70_000);
        assertThat(places.position(199)).isEqualTo(199);
    }
}
