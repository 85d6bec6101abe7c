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

package org.appendlog.statebackend.tracking;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendFixture;
import org.appendlog.statebackend.BackendHarness;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.concurrent.ExecutionException;
import java.util.concurrent.RunnableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Deduplicating the logged writes fails (out of memory, say): the heap still holds every write,
 * so a checkpoint that appends all live entries stands in for the lost changes, and no restore
 * misses one.
 */
class LostChangesTest {

    private static final int KEYS = 1_000;

    @RegisterExtension final BackendFixture fixture = new BackendFixture();
    private AppendLogStateBackend stateBackend;

    @BeforeEach
    void configure() {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        stateBackend = fixture.backend(config);
    }

    /** The barrier counts the changes, and finds them lost: that checkpoint is full. */
    @Test
    void changesFoundLostAtTheBarrierMakeThatCheckpointFull() throws Exception {
        IncrementalRemoteKeyedStateHandle second;
        try (BackendHarness harness = openWithFirstCheckpoint()) {
            // As many changes as live entries and one: the barrier counts them exactly.
            putAll(harness, 2);
            ChangeBufferFaults.appendMalformedRecord(harness.changeTracker());
            second = harness.checkpoint(2);
            assertThat(harness.fullBatches()).isEqualTo(1);
        }
        fixture.assertRestores(stateBackend, second, KEYS, key -> 2L);
    }

    /**
     * The loss shows only in the asynchronous phase: that checkpoint fails, saying why, and the
     * next is full.
     */
    @Test
    void changesFoundLostWhenWrittenFailTheCheckpointAndTheNextIsFull() throws Exception {
        IncrementalRemoteKeyedStateHandle third;
        try (BackendHarness harness = openWithFirstCheckpoint()) {
            harness.put(6, 2L);
            ChangeBufferFaults.appendMalformedRecord(harness.changeTracker());
            harness.put(7, 2L);
            RunnableFuture<SnapshotResult<KeyedStateHandle>> failing = harness.snapshot(2);
            failing.run();
            assertThatThrownBy(failing::get)
                    .isInstanceOf(ExecutionException.class)
                    .hasStackTraceContaining("lost while deduplicating");
            harness.backend.notifyCheckpointAborted(2);
            harness.put(8, 3L);
            third = harness.checkpoint(3);
            assertThat(harness.fullBatches()).isEqualTo(1);
        }
        fixture.assertRestores(
                stateBackend, third, KEYS, key -> key == 6 || key == 7 ? 2L : key == 8 ? 3L : 1L);
    }

    /** A harness whose keys all hold 1, as completed checkpoint 1 does. */
    private BackendHarness openWithFirstCheckpoint() throws Exception {
        BackendHarness harness = fixture.open(stateBackend);
        putAll(harness, 1);
        harness.checkpoint(1);
        return harness;
    }

    private static void putAll(BackendHarness harness, long value) throws Exception {
        for (int key = 0; key < KEYS; key++) {
            harness.put(key, value);
        }
    }
}
