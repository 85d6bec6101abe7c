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

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.Random;

/** Records of drawn checkpoints and states, for the tests of whole batches. */
final class RandomRecords {

    private RandomRecords() {}

    /**
     * Adds {@code key} with {@code value} (null: a tombstone) to {@code batch} in {@code keyGroup},
     * written by one of the three checkpoints up to {@code checkpointId}, of state 0 or 1, both
     * drawn from {@code random}.
     */
    static void add(
            BatchBuilder batch,
            Random random,
            int keyGroup,
            long checkpointId,
            byte[] key,
            @Nullable byte[] value)
            throws IOException {
        RecordFormat.write(
                batch,
                keyGroup,
                checkpointId - random.nextInt(3),
                random.nextInt(2),
                key,
                0,
                key.length,
                value,
                0,
                value == null ? 0 : value.length);
    }
}
