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

import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.AbstractFsCheckpointStorageAccess;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

import java.io.DataInputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;

/** The {@code _metadata} of a checkpoint or savepoint on disk, as Flink itself reads it. */
final class SnapshotMetadata {

    private final String pointer;
    private final CheckpointMetadata metadata;

    private SnapshotMetadata(String pointer, CheckpointMetadata metadata) {
        this.pointer = pointer;
        this.metadata = metadata;
    }

    /** Loads the snapshot in {@code pointer}, a {@code chk-N} or savepoint directory. */
    static SnapshotMetadata load(String pointer) throws IOException {
        CompletedCheckpointStorageLocation location =
                AbstractFsCheckpointStorageAccess.resolveCheckpointPointer(pointer);
        try (DataInputStream in =
                new DataInputStream(location.getMetadataHandle().openInputStream())) {
            return new SnapshotMetadata(
                    pointer,
                    Checkpoints.loadCheckpointMetadata(
                            in,
                            SnapshotMetadata.class.getClassLoader(),
                            location.getExternalPointer()));
        }
    }

    long checkpointId() {
        return metadata.getCheckpointId();
    }

    /** The managed keyed state handles of all operators and subtasks. */
    List<KeyedStateHandle> keyedStateHandles() {
        List<KeyedStateHandle> handles = new ArrayList<>();
        for (OperatorState operator : metadata.getOperatorStates()) {
            for (OperatorSubtaskState subtask : operator.getStates()) {
                handles.addAll(subtask.getManagedKeyedState());
            }
        }
        return handles;
    }

    /**
     * The files that the keyed state handles share with other checkpoints (log segments). State
     * small enough to be inlined into the {@code _metadata} has no file and is not listed.
     */
    Set<String> sharedFiles() {
        return files(true);
    }

    /** The files that belong to this snapshot only; inlined state is not listed. */
    Set<String> privateFiles() {
        return files(false);
    }

    private Set<String> files(boolean shared) {
        Set<String> paths = new TreeSet<>();
        for (KeyedStateHandle handle : keyedStateHandles()) {
            if (!(handle instanceof IncrementalRemoteKeyedStateHandle)) {
                continue;
            }
            IncrementalRemoteKeyedStateHandle incremental =
                    (IncrementalRemoteKeyedStateHandle) handle;
            List<HandleAndLocalPath> files =
                    shared ? incremental.getSharedState() : incremental.getPrivateState();
            for (HandleAndLocalPath file : files) {
                if (!(file.getHandle() instanceof ByteStreamStateHandle)) {
                    paths.add(pathOf(file.getHandle()));
                }
            }
        }
        return paths;
    }

    private String pathOf(StreamStateHandle handle) {
        if (!(handle instanceof FileStateHandle)) {
            throw new AssertionError(
                    "Expected file handles in " + pointer + ", found " + handle);
        }
        return ((FileStateHandle) handle).getFilePath().toUri().getPath();
    }

    @Override
    public String toString() {
        return pointer;
    }
}
