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

import java.nio.charset.StandardCharsets;

import static org.assertj.core.api.Assertions.assertThat;

class KeyBytesTest {

    private static int hash(int state, String key) {
        byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
        return KeyBytes.hash(state, bytes, 0, bytes.length);
    }

    /** The tables compare hashes before bytes: a key must hash the same wherever it lies. */
    @Test
    void theSameBytesHashTheSameAtAnyOffset() {
        byte[] key = "word-0042-and-more".getBytes(StandardCharsets.UTF_8);
        for (int offset = 0; offset < 11; offset++) {
            byte[] shifted = new byte[offset + key.length + 5];
            System.arraycopy(key, 0, shifted, offset, key.length);
            assertThat(KeyBytes.hash(3, shifted, offset, key.length))
                    .isEqualTo(KeyBytes.hash(3, key, 0, key.length));
        }
    }

    /** Every byte counts, in whole words and in the partial last one; so do state and length. */
    @Test
    void statesLengthsAndEveryByteChangeTheHash() {
        assertThat(hash(1, "counter")).isNotEqualTo(hash(2, "counter"));
        assertThat(hash(1, "")).isNotEqualTo(hash(2, ""));
        assertThat(hash(1, "a")).isNotEqualTo(hash(1, "a\0"));
        for (String key : new String[] {"abc", "abcdefgh", "abcdefghij", "abcdefghijklmnopq"}) {
            for (int i = 0; i < key.length(); i++) {
                char[] changed = key.toCharArray();
                changed[i]++;
                assertThat(hash(1, new String(changed)))
                        .as(key + " at " + i)
                        .isNotEqualTo(hash(1, key));
            }
        }
    }

    /** Linear probing needs the low bits spread: similar keys must not crowd a few slots. */
    @Test
    void similarKeysSpreadOverTheLowBits() {
        int slots = 1 << 18;
        int[] perSlot = new int[slots];
        int keys = slots / 2;
        for (int i = 0; i < keys; i++) {
            perSlot[hash(0, "w" + i) & (slots - 1)]++;
        }
        int occupied = 0;
        int most = 0;
        for (int count : perSlot) {
            occupied += count > 0 ? 1 : 0;
            most = Math.max(most, count);
        }
        // Uniform hashing would occupy 1 - e^-0.5 = 39% of the slots, at most about 8 per slot.
        assertThat(occupied).isGreaterThan((int) (slots * 0.38));
        assertThat(most).isLessThanOrEqualTo(10);
    }
}
