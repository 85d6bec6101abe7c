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

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.BackendBuildingException;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeOffsets;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * How the handles of a restore are sorted by format and what states they hold. Restores of each
 * format are in {@code FlinkFormatRestoreTest}, {@code RescaleRestoreTest} and {@code
 * BackendSwitchTest}.
 */
class RestoreHandlesTest {

    private static final KeyGroupRange KEY_GROUPS = KeyGroupRange.of(0, 3);
    private static final ClassLoader CLASS_LOADER = RestoreHandlesTest.class.getClassLoader();

    @Test
    void flinkFormatHandlesGoToTheHeapBackendWithEachStateOnce() throws Exception {
        KeyedStateHandle first = flinkFormat("first", "counts");
        KeyedStateHandle second = flinkFormat("second", "counts", "extra");

        RestoreHandles handles = RestoreHandles.classify(List.of(first, second), CLASS_LOADER);

        assertThat(handles.flinkFormat()).containsExactly(first, second);
        assertThat(handles.checkpoints()).isEmpty();
        assertThat(handles.hasNativeSavepoint()).isFalse();
        assertThat(handles.mergedMeta(CLASS_LOADER))
                .extracting(StateMetaInfoSnapshot::getName)
                .containsExactly("counts", "extra");
    }

    @Test
    void theCheckpointOfAnotherBackendIsRefusedNamingItsMetaData() {
        IncrementalRemoteKeyedStateHandle rocksDb =
                new IncrementalRemoteKeyedStateHandle(
                        UUID.randomUUID(),
                        KEY_GROUPS,
                        1,
                        List.of(),
                        List.of(),
                        new ByteStreamStateHandle("rocksdb-meta", new byte[] {1, 2, 3, 4, 5, 6, 7, 8}),
                        8);

        assertThatThrownBy(() -> RestoreHandles.classify(List.of(rocksDb), CLASS_LOADER))
                .isInstanceOf(BackendBuildingException.class)
                .hasMessageContaining("rocksdb-meta")
                .hasMessageContaining("has no appendlog manifest magic at offset 0")
                .hasMessageContaining("savepoint in the canonical format");
    }

    @Test
    void noHandlesRestoreNothing() throws Exception {
        RestoreHandles handles = RestoreHandles.classify(List.of(), CLASS_LOADER);

        assertThat(handles.checkpoints()).isEmpty();
        assertThat(handles.flinkFormat()).isEmpty();
        assertThat(handles.mergedMeta(CLASS_LOADER)).isEmpty();
    }

    /** A handle in Flink's key-group format holding no entries of the states {@code names}. */
    private static KeyGroupsStateHandle flinkFormat(String handleName, String... names)
            throws Exception {
        List<StateMetaInfoSnapshot> states = new ArrayList<>();
        for (String name : names) {
            states.add(
                    new RegisteredKeyValueStateBackendMetaInfo<>(
                                    StateDescriptor.Type.VALUE,
                                    name,
                                    VoidNamespaceSerializer.INSTANCE,
                                    LongSerializer.INSTANCE)
                            .snapshot());
        }
        DataOutputSerializer out = new DataOutputSerializer(256);
        new KeyedBackendSerializationProxy<>(IntSerializer.INSTANCE, states, false).write(out);
        return new KeyGroupsStateHandle(
                new KeyGroupRangeOffsets(KEY_GROUPS),
                new ByteStreamStateHandle(handleName, out.getCopyOfBuffer()));
    }
}
