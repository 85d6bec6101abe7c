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
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.testutils.statemigration.TestType;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.concurrent.RunnableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A state restored from the log and registered again with a serializer that needs migration
 * (Flink's test types: V2 reads what V1 wrote only by migrating). The log still holds the records
 * V1 wrote, which the next checkpoint's manifest would describe with V2's snapshot.
 */
class SerializerUpgradeTest {

    private static final int KEYS = 500;

    @TempDir Path logDir;

    @Test
    void theCheckpointAfterAMigratingRegistrationRestores() throws Exception {
        AppendLogStateBackend stateBackend = new AppendLogStateBackend(logDir.toUri().toString());
        SharedStateRegistry registry = BackendHarness.newRegistry();
        KeyedStateHandle first;
        AppendLogKeyedStateBackend<Integer> v1 =
                BackendHarness.build(stateBackend, Collections.emptyList());
        try {
            ValueState<TestType> state = state(v1, new TestType.V1TestTypeSerializer());
            for (int key = 0; key < KEYS; key++) {
                v1.setCurrentKey(key);
                state.update(new TestType("k" + key, key));
            }
            first = checkpoint(v1, registry, 1);
        } finally {
            v1.dispose();
        }

        KeyedStateHandle second;
        AppendLogKeyedStateBackend<Integer> v2 =
                BackendHarness.build(stateBackend, List.of(first));
        try {
            ValueState<TestType> state = state(v2, new TestType.V2TestTypeSerializer());
            v2.setCurrentKey(0);
            state.update(new TestType("k0", -1));
            second = checkpoint(v2, registry, 2);
        } finally {
            v2.dispose();
        }

        AppendLogKeyedStateBackend<Integer> restored =
                BackendHarness.build(stateBackend, List.of(second));
        try {
            ValueState<TestType> state = state(restored, new TestType.V2TestTypeSerializer());
            for (int key = 0; key < KEYS; key++) {
                restored.setCurrentKey(key);
                assertThat(state.value()).isEqualTo(new TestType("k" + key, key == 0 ? -1 : key));
            }
        } finally {
            restored.dispose();
        }
    }

    private static ValueState<TestType> state(
            AppendLogKeyedStateBackend<Integer> backend, TypeSerializer<TestType> serializer)
            throws Exception {
        return backend.getPartitionedState(
                VoidNamespace.INSTANCE,
                VoidNamespaceSerializer.INSTANCE,
                new ValueStateDescriptor<>("test", serializer));
    }

    private static KeyedStateHandle checkpoint(
            AppendLogKeyedStateBackend<Integer> backend, SharedStateRegistry registry, long id)
            throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                BackendHarness.snapshot(backend, id);
        future.run();
        KeyedStateHandle handle = future.get().getJobManagerOwnedSnapshot();
        registry.registerAll(Collections.singletonList(handle), id);
        backend.notifyCheckpointComplete(id);
        return handle;
    }
}
