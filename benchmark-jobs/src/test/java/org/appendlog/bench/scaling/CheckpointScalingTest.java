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

package org.appendlog.bench.scaling;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.within;

/** One point of the sweep on each backend, two subtasks: each restores its values exactly. */
class CheckpointScalingTest {

    private static final int KEYS = 100_000;
    private static final int VALUE_BYTES = 100;

    @Test
    void appendlogCheckpointsTheChangesAndTimesItsIndexRebuild(@TempDir Path dir) throws Exception {
        Measurement m = new CheckpointScaling(VALUE_BYTES).run("appendlog", KEYS, 2, 1, dir);

        double stateMb = m.figures.get(CheckpointScaling.STATE_MB);
        assertThat(stateMb).as("every value and its key").isBetween(KEYS * VALUE_BYTES / 1e6, 1.5 * KEYS * VALUE_BYTES / 1e6);
        assertThat(m.figures.get(CheckpointScaling.SECOND_MB))
                .as("checkpoint 2 uploads the tenth rewritten")
                .isCloseTo(stateMb / 10, within(stateMb / 40));
        assertThat(m.figures.get(CheckpointScaling.FIRST_MB_PER_S)).isPositive();
        assertThat(m.figures.get(CheckpointScaling.INDEX_MS))
                .as("the restoreIndexMillis metric of the slower subtask")
                .isPositive()
                .isLessThanOrEqualTo(m.figures.get(CheckpointScaling.RESTORE_MS) * 8);
    }

    @Test
    void hashmapWritesTheWholeStateEachTimeAndHasNoIndex(@TempDir Path dir) throws Exception {
        Measurement m = new CheckpointScaling(VALUE_BYTES).run("hashmap", KEYS, 2, 1, dir);

        assertThat(m.figures.get(CheckpointScaling.SECOND_MB))
                .isEqualTo(m.figures.get(CheckpointScaling.STATE_MB));
        assertThat(m.figures.get(CheckpointScaling.RESTORE_MS)).isPositive();
        assertThat(m.figures).doesNotContainKey(CheckpointScaling.INDEX_MS);
    }
}
