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

package org.appendlog.statebackend.log;

import org.apache.flink.runtime.state.KeyGroupRange;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;

/** Joining builders: taking another builder's buffers writes the same batch as copying them. */
class BatchBuilderTest {

    private static final KeyGroupRange RANGE = KeyGroupRange.of(10, 17);
    private static final List<String> STATES = List.of("a", "b");

    @Test
    void takingBuffersWritesTheSameBatchAsCopyingThem() throws IOException {
        // The first builder has records in key groups 10-13, the second in 12-17: key groups
        // 12 and 13 must be copied after the first's records, the others may be taken over.
        BatchBuilder copied = filled(5, 10, 13, 1);
        BatchBuilder taken = filled(5, 10, 13, 1);
        copied.appendAll(filled(6, 12, 17, 2));
        taken.takeAll(filled(6, 12, 17, 2));

        assertThat(taken.recordCount()).isEqualTo(copied.recordCount()).isEqualTo(2_000);
        assertThat(taken.minCheckpointId()).isEqualTo(copied.minCheckpointId()).isEqualTo(3);
        for (int kg = 10; kg <= 17; kg++) {
            assertThat(taken.recordCount(kg)).isEqualTo(copied.recordCount(kg));
        }
        assertThat(written(taken)).isEqualTo(written(copied));
    }

    @Test
    void disjointSlicesBecomeOneBatchInKeyGroupOrder() throws IOException {
        BatchBuilder run = new BatchBuilder(9, RANGE, STATES);
        BatchBuilder expected = new BatchBuilder(9, RANGE, STATES);
        for (int[] slice : new int[][] {{10, 11}, {12, 15}, {16, 17}}) {
            run.takeAll(filled(7, slice[0], slice[1], slice[0]));
            expected.appendAll(filled(7, slice[0], slice[1], slice[0]));
        }
        assertThat(run.recordCount()).isEqualTo(3_000);
        assertThat(written(run)).isEqualTo(written(expected));
    }

    /** 1000 records of checkpoints up to {@code checkpointId} in key groups {@code from-to}. */
    private static BatchBuilder filled(long checkpointId, int from, int to, int seed)
            throws IOException {
        BatchBuilder builder = new BatchBuilder(checkpointId, RANGE, STATES);
        Random random = new Random(seed);
        for (int i = 0; i < 1_000; i++) {
            byte[] key = ("k" + seed + "-" + i).getBytes(StandardCharsets.UTF_8);
            byte[] value = random.nextInt(10) == 0 ? null : new byte[random.nextInt(30)];
            RandomRecords.add(
                    builder, random, from + random.nextInt(to - from + 1), checkpointId, key, value);
        }
        return builder;
    }

    private static byte[] written(BatchBuilder batch) throws IOException {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BatchFormat.write(out, "segment", 8, batch, BatchCompression.NONE);
        return out.toByteArray();
    }
}
