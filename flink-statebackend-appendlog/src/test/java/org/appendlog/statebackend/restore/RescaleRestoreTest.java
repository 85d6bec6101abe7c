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

package org.appendlog.statebackend.restore;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendHarness;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Scaling up, then down: each subtask's handles keep listing the batches written before the
 * rescale, which hold the other subtasks' key groups as they were then.
 */
class RescaleRestoreTest {

    private static final int KEYS = 2_000;
    private static final KeyGroupRange ALL = KeyGroupRange.of(0, BackendHarness.MAX_PARALLELISM - 1);
    private static final KeyGroupRange LOWER = KeyGroupRange.of(0, 63);
    private static final KeyGroupRange UPPER = KeyGroupRange.of(64, 127);

    @TempDir Path logDir;

    /**
     * The upper subtask removes a key and appends a full batch, which lists nothing older; the
     * lower one still lists the first batch, which holds the key. Scaled down again, the key must
     * stay removed, and the checkpoint after the restore must not list that batch as its own.
     */
    @Test
    void anEntryRemovedByTheSubtaskThatOwnsItStaysRemovedAfterScalingDown() throws Exception {
        AppendLogStateBackend stateBackend = backend();
        SharedStateRegistry registry = BackendHarness.newRegistry();
        IncrementalRemoteKeyedStateHandle first;
        try (BackendHarness harness = BackendHarness.open(stateBackend, registry)) {
            for (int key = 0; key < KEYS; key++) {
                harness.put(key, key);
            }
            first = harness.checkpoint(1);
        }
        int removed = firstKeyIn(UPPER);
        IncrementalRemoteKeyedStateHandle lower;
        IncrementalRemoteKeyedStateHandle upper;
        try (BackendHarness lowerHalf =
                        BackendHarness.restore(stateBackend, registry, List.of(first), LOWER);
                BackendHarness upperHalf =
                        BackendHarness.restore(stateBackend, registry, List.of(first), UPPER)) {
            // One checkpoint of both subtasks, as the coordinator takes it.
            lower = lowerHalf.checkpointThatNeverCompletes(2);
            upperHalf.remove(removed);
            upper = upperHalf.checkpointThatNeverCompletes(2);
            lowerHalf.acknowledge(lower, 2);
            upperHalf.acknowledge(upper, 2);
            lowerHalf.complete(2);
            upperHalf.complete(2);
            assertThat(upperHalf.fullBatches()).isEqualTo(1);
            assertThat(lowerHalf.fullBatches()).isZero();
        }
        List<KeyedStateHandle> halves = Arrays.asList(lower, upper);
        IncrementalRemoteKeyedStateHandle merged;
        try (BackendHarness whole = BackendHarness.restore(stateBackend, registry, halves, ALL)) {
            assertThat(whole.get(removed)).isNull();
            assertThat(whole.backend.numKeyValueStateEntries()).isEqualTo(KEYS - 1);
            merged = whole.checkpoint(3);
            assertThat(whole.fullBatches()).as("the first checkpoint after merging").isEqualTo(1);
        }
        BackendHarness.assertRestores(
                stateBackend, registry, merged, KEYS, key -> key == removed ? null : (long) key);
    }

    private AppendLogStateBackend backend() {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, logDir.toUri().toString());
        // Any change turns the state over: the upper subtask's removal appends a full batch.
        config.set(AppendLogOptions.FULL_CHECKPOINT_RATIO, 1e-9);
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        return new AppendLogStateBackend().configure(config, getClass().getClassLoader());
    }

    private static int firstKeyIn(KeyGroupRange range) {
        for (int key = 0; ; key++) {
            if (range.contains(
                    KeyGroupRangeAssignment.assignToKeyGroup(key, BackendHarness.MAX_PARALLELISM))) {
                return key;
            }
        }
    }
}
