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

import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/** Colliding and wrapping probe runs survive insertion and doubling. */
class HashSlotsTest {

    @Test
    void occupantsKeepHashAndLowHalfAcrossDoubling() {
        long[] table = new long[8];
        // Hashes 7, 15 and -1 share home slot 7 of 8: the run wraps around to slots 0 and 1.
        HashSlots.insert(table, HashSlots.occupant(7, 1));
        HashSlots.insert(table, HashSlots.occupant(15, 2));
        HashSlots.insert(table, HashSlots.occupant(-1, -5));
        assertThat(HashSlots.hashOf(table[7])).isEqualTo(7);
        assertThat(HashSlots.lowOf(table[0])).isEqualTo(2);
        assertThat(HashSlots.hashOf(table[1])).isEqualTo(-1);
        assertThat(HashSlots.lowOf(table[1])).isEqualTo(-5);

        long[] grown = HashSlots.doubled(table);
        assertThat(grown).hasSize(16);
        // Home slots in 16: 7, 15 and 15, the last wrapping to 0.
        assertThat(HashSlots.lowOf(grown[7])).isEqualTo(1);
        assertThat(HashSlots.lowOf(grown[15])).isEqualTo(2);
        assertThat(HashSlots.lowOf(grown[0])).isEqualTo(-5);
        assertThat(Arrays.stream(grown).filter(o -> o != 0).count()).isEqualTo(3);
    }
}
