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

package org.appendlog.hbase;

import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.InputChannelStateHandle;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.ResultSubpartitionStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

import java.io.DataInputStream;
import java.io.IOException;
import java.util.Map;
import java.util.TreeMap;

/**
 * The HBase streams a completed checkpoint needs, read from its {@code _metadata} with Flink's own
 * reader: stream key to length, its metadata stream included. What must stay in the table while
 * the checkpoint is retained, and nothing more. For unaligned checkpoints, {@link #inFlight} names
 * the streams of their in-flight data.
 */
final class CheckpointStreams {

    private CheckpointStreams() {}

    static Map<String, Long> of(CompletedCheckpointStorageLocation checkpoint) throws IOException {
        Map<String, Long> streams = new TreeMap<>();
        add(streams, checkpoint.getMetadataHandle());
        for (OperatorState operator : metadata(checkpoint).getOperatorStates()) {
            add(streams, operator.getCoordinatorState());
            for (OperatorSubtaskState subtask : operator.getStates()) {
                if (!subtask.getInputChannelState().isEmpty()
                        || !subtask.getResultSubpartitionState().isEmpty()) {
                    throw new IllegalStateException("Unexpected in-flight data in " + checkpoint);
                }
                for (OperatorStateHandle handle : subtask.getManagedOperatorState()) {
                    add(streams, handle.getDelegateStateHandle());
                }
                for (OperatorStateHandle handle : subtask.getRawOperatorState()) {
                    add(streams, handle.getDelegateStateHandle());
                }
                for (KeyedStateHandle handle : subtask.getManagedKeyedState()) {
                    addKeyed(streams, handle);
                }
                for (KeyedStateHandle handle : subtask.getRawKeyedState()) {
                    addKeyed(streams, handle);
                }
            }
        }
        return streams;
    }

    /**
     * The streams that hold a checkpoint's in-flight data (channel state of unaligned
     * checkpoints: the input channels' and the result subpartitions' buffers of every subtask),
     * each once although several subtasks may share one: by name ({@code hbase://} path of a
     * stream in rows, or the name of an inline handle), the handle Flink restores them from.
     */
    static Map<String, StreamStateHandle> inFlight(CompletedCheckpointStorageLocation checkpoint)
            throws IOException {
        Map<String, StreamStateHandle> streams = new TreeMap<>();
        for (OperatorState operator : metadata(checkpoint).getOperatorStates()) {
            for (OperatorSubtaskState subtask : operator.getStates()) {
                for (InputChannelStateHandle handle : subtask.getInputChannelState()) {
                    addInFlight(streams, handle.getDelegate());
                }
                for (ResultSubpartitionStateHandle handle : subtask.getResultSubpartitionState()) {
                    addInFlight(streams, handle.getDelegate());
                }
            }
        }
        return streams;
    }

    private static void addInFlight(Map<String, StreamStateHandle> streams, StreamStateHandle handle) {
        String name =
                handle instanceof FileStateHandle
                        ? ((FileStateHandle) handle).getFilePath().toString()
                        : handle instanceof ByteStreamStateHandle
                                ? ((ByteStreamStateHandle) handle).getHandleName()
                                : handle.toString();
        streams.put(name, handle);
    }

    /** Reads the checkpoint's {@code _metadata} with Flink's own reader. */
    private static CheckpointMetadata metadata(CompletedCheckpointStorageLocation checkpoint)
            throws IOException {
        try (DataInputStream in =
                new DataInputStream(checkpoint.getMetadataHandle().openInputStream())) {
            return Checkpoints.loadCheckpointMetadata(
                    in, CheckpointStreams.class.getClassLoader(), checkpoint.getExternalPointer());
        }
    }

    /** The row key of a stream of the HBase storage (its {@code hbase://} path without table). */
    static String streamKey(FileStateHandle handle) {
        return handle.getFilePath().toUri().getPath().substring(1);
    }

    private static void addKeyed(Map<String, Long> streams, KeyedStateHandle handle) {
        if (handle instanceof KeyGroupsStateHandle) {
            add(streams, ((KeyGroupsStateHandle) handle).getDelegateStateHandle());
        } else if (handle instanceof IncrementalRemoteKeyedStateHandle) {
            IncrementalRemoteKeyedStateHandle incremental = (IncrementalRemoteKeyedStateHandle) handle;
            add(streams, incremental.getMetaDataStateHandle());
            for (HandleAndLocalPath file : incremental.getSharedState()) {
                add(streams, file.getHandle());
            }
            for (HandleAndLocalPath file : incremental.getPrivateState()) {
                add(streams, file.getHandle());
            }
        } else {
            throw new IllegalStateException("Unexpected keyed state handle " + handle);
        }
    }

    /** Inline handles have no rows; anything else must be a stream of the HBase storage. */
    private static void add(Map<String, Long> streams, StreamStateHandle handle) {
        if (handle == null || handle instanceof ByteStreamStateHandle) {
            return;
        }
        if (!(handle instanceof FileStateHandle)
                || !HBaseCheckpointPointer.SCHEME.equals(
                        ((FileStateHandle) handle).getFilePath().toUri().getScheme())) {
            throw new IllegalStateException("Not a stream of the HBase storage: " + handle);
        }
        streams.put(streamKey((FileStateHandle) handle), handle.getStateSize());
    }
}
