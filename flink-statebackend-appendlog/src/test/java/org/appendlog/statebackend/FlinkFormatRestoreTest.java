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

package org.appendlog.statebackend;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointableKeyedStateBackend;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.RunnableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** Restores of canonical savepoints, which Flink's heap reads and the log then takes over. */
class FlinkFormatRestoreTest {

    private static final int KEYS = 2_000;
    private static final ValueStateDescriptor<Long> EXTRA =
            new ValueStateDescriptor<>("extra", LongSerializer.INSTANCE);

    @TempDir Path logDir;

    /**
     * A canonical savepoint of two subtasks, only the second of which registered state "extra",
     * restored by one: the checkpoints that follow keep "extra", though the job has not touched
     * it since.
     */
    @Test
    void aStateThatOnlyOneMergedHandleHoldsIsCheckpointed() throws Exception {
        KeyGroupsStateHandle first = canonicalSavepoint(KeyGroupRange.of(0, 63), false);
        KeyGroupsStateHandle second = canonicalSavepoint(KeyGroupRange.of(64, 127), true);
        AppendLogStateBackend appendLog = appendLog();
        SharedStateRegistry registry = BackendHarness.newRegistry();
        IncrementalRemoteKeyedStateHandle checkpoint;
        try (BackendHarness harness =
                BackendHarness.restore(appendLog, registry, List.of(first, second))) {
            checkpoint = harness.checkpoint(1);
        }
        try (BackendHarness restored =
                BackendHarness.restore(appendLog, registry, Collections.singletonList(checkpoint))) {
            ValueState<Long> extra = extraOf(restored.backend);
            int extras = 0;
            for (int key = 0; key < KEYS; key++) {
                assertThat(restored.get(key)).as("counts of key %d", key).isEqualTo((long) key);
                boolean inSecond = keyGroup(key) >= 64;
                assertThat(extra.value())
                        .as("extra of key %d", key)
                        .isEqualTo(inSecond ? 10L * key : null);
                extras += inSecond ? 1 : 0;
            }
            assertThat(extras).isPositive();
        }
    }

    /**
     * A {@code hashmap} subtask owning {@code keyGroups}: "counts" holds each of its keys, and
     * "extra" ten times the key if {@code withExtra}; its canonical savepoint.
     */
    private static KeyGroupsStateHandle canonicalSavepoint(KeyGroupRange keyGroups, boolean withExtra)
            throws Exception {
        CheckpointableKeyedStateBackend<Integer> backend =
                new HashMapStateBackend()
                        .createKeyedStateBackend(
                                BackendHarness.parameters(Collections.emptyList(), keyGroups));
        try {
            ValueState<Long> counts =
                    backend.getPartitionedState(
                            VoidNamespace.INSTANCE,
                            VoidNamespaceSerializer.INSTANCE,
                            BackendHarness.COUNTS);
            ValueState<Long> extra = withExtra ? extraOf(backend) : null;
            for (int key = 0; key < KEYS; key++) {
                if (keyGroups.contains(keyGroup(key))) {
                    backend.setCurrentKey(key);
                    counts.update((long) key);
                    if (extra != null) {
                        extra.update(10L * key);
                    }
                }
            }
            RunnableFuture<SnapshotResult<KeyedStateHandle>> savepoint =
                    backend.snapshot(
                            1,
                            1,
                            new MemCheckpointStreamFactory(Integer.MAX_VALUE),
                            new CheckpointOptions(
                                    SavepointType.savepoint(SavepointFormatType.CANONICAL),
                                    CheckpointStorageLocationReference.getDefault()));
            savepoint.run();
            return (KeyGroupsStateHandle) savepoint.get().getJobManagerOwnedSnapshot();
        } finally {
            backend.dispose();
        }
    }

    private static ValueState<Long> extraOf(CheckpointableKeyedStateBackend<Integer> backend)
            throws Exception {
        return backend.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, EXTRA);
    }

    private static int keyGroup(int key) {
        return KeyGroupRangeAssignment.assignToKeyGroup(key, BackendHarness.MAX_PARALLELISM);
    }

    private AppendLogStateBackend appendLog() {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, logDir.toUri().toString());
        return new AppendLogStateBackend().configure(config, getClass().getClassLoader());
    }
}
