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

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The table against a LinkedHashMap (what compaction deduplicated with before): random offers
 * over many entries whose keys lie at different offsets of shared arrays, key groups reusing the
 * table after {@link LatestRecords#clear()}.
 */
class LatestRecordsTest {

    @Test
    void agreesWithALinkedHashMap() {
        Random random = new Random(5);
        LatestRecords table = new LatestRecords();
        for (int keyGroup = 0; keyGroup < 4; keyGroup++) {
            table.clear();
            assertThat(table.size()).isZero();
            // Per entry: {checkpoint id, position} of the latest offer; insertion order kept.
            Map<String, long[]> expected = new LinkedHashMap<>();
            byte[] arena = new byte[1 << 20];
            int used = 0;
            int offers = 20_000 + keyGroup * 20_000;
            for (int i = 0; i < offers; i++) {
                int state = random.nextInt(3);
                // Keys share prefixes and lengths, so hashes collide and probe runs form.
                byte[] key = ("k" + random.nextInt(offers / 4)).getBytes(StandardCharsets.UTF_8);
                // Each offer's key is a fresh copy at a new offset, as records of other batches.
                System.arraycopy(key, 0, arena, used, key.length);
                long checkpoint = random.nextInt(20);
                long position = i;
                table.offer(state, arena, used, key.length, checkpoint, position);
                used += key.length;
                long[] previous = expected.get(state + "/" + new String(key, StandardCharsets.UTF_8));
                if (previous == null) {
                    expected.put(
                            state + "/" + new String(key, StandardCharsets.UTF_8),
                            new long[] {checkpoint, position});
                } else if (checkpoint >= previous[0]) {
                    previous[0] = checkpoint;
                    previous[1] = position;
                }
            }
            assertThat(table.size()).isEqualTo(expected.size());
            List<String> keys = new ArrayList<>(expected.keySet());
            for (int entry = 0; entry < table.size(); entry++) {
                String[] parts = keys.get(entry).split("/", 2);
                assertThat(table.state(entry)).isEqualTo(Integer.parseInt(parts[0]));
                assertThat(table.position(entry))
                        .as(keys.get(entry))
                        .isEqualTo(expected.get(keys.get(entry))[1]);
            }
        }
    }
}
