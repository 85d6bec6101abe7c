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

class ArenaCompactionTest {

    /**
     * Entries numbered out of arena order, dead ones between them: the live slices keep their
     * bytes and their order in the arena, and end up at its front.
     */
    @Test
    void liveSlicesMoveToTheFrontInArenaOrder() {
        String[] slices = {"dead-1", "alpha", "dead-22", "beta", "gamma", "dead-333"};
        // Entry e's slice is slices[position[e]]: entry numbers do not follow arena order.
        int[] position = {4, 0, 3, 5, 1, 2};
        byte[] arena = new byte[64];
        int[] sliceAt = new int[slices.length];
        int used = 0;
        for (int i = 0; i < slices.length; i++) {
            byte[] bytes = slices[i].getBytes(StandardCharsets.US_ASCII);
            System.arraycopy(bytes, 0, arena, used, bytes.length);
            sliceAt[i] = used;
            used += bytes.length;
        }
        int[] at = new int[position.length];
        int[] length = new int[position.length];
        for (int entry = 0; entry < position.length; entry++) {
            String slice = slices[position[entry]];
            at[entry] = sliceAt[position[entry]];
            length[entry] = slice.startsWith("dead") ? (entry % 2 == 0 ? 0 : -1) : slice.length();
        }

        int compacted = ArenaCompaction.compact(arena, at, entry -> length[entry], position.length);

        assertThat(compacted).isEqualTo("alphabetagamma".length());
        assertThat(new String(arena, 0, compacted, StandardCharsets.US_ASCII))
                .isEqualTo("alphabetagamma");
        for (int entry = 0; entry < position.length; entry++) {
            if (length[entry] > 0) {
                assertThat(new String(arena, at[entry], length[entry], StandardCharsets.US_ASCII))
                        .isEqualTo(slices[position[entry]]);
            }
        }
    }
}
