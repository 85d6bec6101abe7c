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
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** What a streamed batch refuses: its header names one checkpoint, which all its records carry. */
class BatchStreamTest {

    @Test
    void aRecordOfAnotherCheckpointIsRefused() throws Exception {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        BatchStream batch =
                new BatchStream(
                        out, "seg", 0, 4, KeyGroupRange.of(0, 3), List.of("s"), BatchCompression.NONE, 64);
        byte[] key = {1, 2};
        RecordFormat.write(batch, 1, 4, 0, key, 0, key.length, key, 0, key.length);

        assertThatThrownBy(() -> RecordFormat.write(batch, 1, 3, 0, key, 0, key.length, null, 0, 0))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("A record of checkpoint 3 in the batch of checkpoint 4");
        assertThat(batch.recordCount()).isEqualTo(1);
        assertThat(batch.finish().checkpointId()).isEqualTo(4);
    }
}
