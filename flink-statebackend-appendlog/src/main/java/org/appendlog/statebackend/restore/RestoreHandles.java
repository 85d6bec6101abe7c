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

import org.appendlog.statebackend.log.LogScanner;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.TypeSerializerSchemaCompatibility;
import org.apache.flink.api.common.typeutils.TypeSerializerSnapshot;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.memory.DataInputViewStreamWrapper;
import org.apache.flink.runtime.state.BackendBuildingException;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateSerializerProvider;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;
import org.apache.flink.util.IOUtils;
import org.apache.flink.util.StateMigrationException;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The handles a backend restores, by format: append-log checkpoints and native savepoints, which
 * the {@link AppendLogRestoreOperation} reads, or Flink's key-group format (canonical savepoints
 * of any backend, {@code hashmap} checkpoints), which the heap backend reads. Never both.
 */
public final class RestoreHandles {

    private final List<RestoredCheckpoint> checkpoints;
    private final List<KeyedStateHandle> flinkFormat;
    private final boolean nativeSavepoint;

    private RestoreHandles(
            List<RestoredCheckpoint> checkpoints,
            List<KeyedStateHandle> flinkFormat,
            boolean nativeSavepoint) {
        this.checkpoints = checkpoints;
        this.flinkFormat = flinkFormat;
        this.nativeSavepoint = nativeSavepoint;
    }

    /** Sorts {@code handles} by format, reading the manifests of the append-log ones. */
    public static RestoreHandles classify(List<KeyedStateHandle> handles, ClassLoader classLoader)
            throws IOException, BackendBuildingException {
        List<RestoredCheckpoint> checkpoints = new ArrayList<>();
        List<KeyedStateHandle> flinkFormat = new ArrayList<>();
        boolean nativeSavepoint = false;
        for (KeyedStateHandle handle : handles) {
            if (handle instanceof IncrementalRemoteKeyedStateHandle
                    && RestoredCheckpoint.isAppendLog((IncrementalRemoteKeyedStateHandle) handle)) {
                nativeSavepoint |=
                        !((IncrementalRemoteKeyedStateHandle) handle).getPrivateState().isEmpty();
                checkpoints.add(
                        RestoredCheckpoint.read(
                                (IncrementalRemoteKeyedStateHandle) handle, classLoader));
            } else if (handle instanceof KeyGroupsStateHandle) {
                flinkFormat.add(handle);
            } else if (handle instanceof IncrementalRemoteKeyedStateHandle) {
                throw new BackendBuildingException(
                        "The appendlog state backend cannot restore "
                                + handle
                                + ": its meta data "
                                + LogScanner.describe(
                                        ((IncrementalRemoteKeyedStateHandle) handle)
                                                .getMetaDataStateHandle())
                                + " has no appendlog manifest magic at offset 0: the"
                                + " checkpoint of another state backend, or a damaged"
                                + " manifest. To switch from another backend, restore from a"
                                + " savepoint in the canonical format.");
            } else {
                throw new BackendBuildingException(
                        "The appendlog state backend cannot restore "
                                + handle.getClass().getSimpleName()
                                + " "
                                + handle
                                + ". To switch from another backend, restore from a"
                                + " savepoint in the canonical format.");
            }
        }
        if (!checkpoints.isEmpty() && !flinkFormat.isEmpty()) {
            throw new BackendBuildingException(
                    "Cannot restore appendlog checkpoints and other formats together");
        }
        return new RestoreHandles(checkpoints, flinkFormat, nativeSavepoint);
    }

    /** The append-log checkpoints and native savepoints. */
    public List<RestoredCheckpoint> checkpoints() {
        return checkpoints;
    }

    /** The handles in Flink's key-group format. */
    public List<KeyedStateHandle> flinkFormat() {
        return flinkFormat;
    }

    /**
     * Whether a native savepoint is among them: its segments are its own private files, deleted
     * with it and addressed relative to it.
     */
    boolean hasNativeSavepoint() {
        return nativeSavepoint;
    }

    /**
     * Fails unless the current key serializer reads the restored keys as they are: keys are
     * never migrated.
     */
    public <K> void checkKeySerializer(StateSerializerProvider<K> keySerializerProvider)
            throws StateMigrationException {
        if (checkpoints.isEmpty()) {
            return;
        }
        TypeSerializer<K> current = keySerializerProvider.currentSchemaSerializer();
        @SuppressWarnings("unchecked")
        TypeSerializerSchemaCompatibility<K> compatibility =
                keySerializerProvider.setPreviousSerializerSnapshotForRestoredState(
                        (TypeSerializerSnapshot<K>)
                                checkpoints.get(0).manifest().metadata().getKeySerializerSnapshot());
        if (compatibility.isCompatibleAfterMigration() || compatibility.isIncompatible()) {
            throw new StateMigrationException(
                    "The new key serializer ("
                            + current
                            + ") must be compatible with the previous key serializer ("
                            + keySerializerProvider.previousSchemaSerializer()
                            + ").");
        }
    }

    /**
     * The states of all handles, each once: after rescaling, a state that only some of the old
     * subtasks registered is in their handles alone.
     */
    public List<StateMetaInfoSnapshot> mergedMeta(ClassLoader classLoader) throws IOException {
        List<List<StateMetaInfoSnapshot>> metaOfHandles = new ArrayList<>();
        for (RestoredCheckpoint checkpoint : checkpoints) {
            metaOfHandles.add(checkpoint.manifest().metadata().getStateMetaInfoSnapshots());
        }
        for (KeyedStateHandle handle : flinkFormat) {
            metaOfHandles.add(readFlinkFormatMeta((KeyGroupsStateHandle) handle, classLoader));
        }
        Map<String, StateMetaInfoSnapshot> byName = new LinkedHashMap<>();
        for (List<StateMetaInfoSnapshot> metaOfHandle : metaOfHandles) {
            for (StateMetaInfoSnapshot meta : metaOfHandle) {
                byName.putIfAbsent(meta.getBackendStateType() + "/" + meta.getName(), meta);
            }
        }
        return new ArrayList<>(byName.values());
    }

    private static List<StateMetaInfoSnapshot> readFlinkFormatMeta(
            KeyGroupsStateHandle handle, ClassLoader classLoader) throws IOException {
        FSDataInputStream in = handle.openInputStream();
        try {
            KeyedBackendSerializationProxy<?> proxy =
                    new KeyedBackendSerializationProxy<>(classLoader);
            proxy.read(new DataInputViewStreamWrapper(in));
            return proxy.getStateMetaInfoSnapshots();
        } finally {
            IOUtils.closeQuietly(in);
        }
    }
}
