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

package org.appendlog.statebackend.snapshot;

import org.apache.flink.runtime.state.CheckpointBoundKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;

import javax.annotation.Nullable;

import java.io.File;
import java.util.List;
import java.util.UUID;

/**
 * The task-local state of a checkpoint, kept when Flink's local backup is on: the checkpoint's
 * segments by their real handles (not the placeholders the JobManager resolves), which a restore
 * from it takes up as its own, and the directory of their task-local copies (hard links into the
 * log's local copy, see {@code LocalLogCopy}), from which the restore reads every segment that
 * has one there. Its manifest is the local copy's where there is one. It owns none of the remote
 * files, so Flink's discard of local state deletes nothing but what it deletes itself: the
 * checkpoint's local directory. Flink's changelog backend restores it as the local copy of its
 * materialization.
 */
public final class LocalCopyHandle extends IncrementalRemoteKeyedStateHandle {

    private static final long serialVersionUID = 1L;

    /** Where the segments' copies are, by name; null if the checkpoint has none. */
    @Nullable private final String copies;

    LocalCopyHandle(
            UUID backendId,
            KeyGroupRange keyGroups,
            long checkpointId,
            List<HandleAndLocalPath> segments,
            List<HandleAndLocalPath> privateState,
            StreamStateHandle manifest,
            long checkpointedSize,
            @Nullable File copies) {
        super(backendId, keyGroups, checkpointId, segments, privateState, manifest, checkpointedSize);
        this.copies = copies == null ? null : copies.getAbsolutePath();
    }

    /** The directory of the segments' task-local copies, or null. */
    @Nullable
    public File copies() {
        return copies == null ? null : new File(copies);
    }

    /** The files are the JobManager's copy of the checkpoint and Flink's local directory. */
    @Override
    public void discardState() {}

    /** Stays local state when Flink's changelog backend binds it to a later checkpoint. */
    @Override
    public CheckpointBoundKeyedStateHandle rebound(long checkpointId) {
        return new LocalCopyHandle(
                getBackendIdentifier(),
                getKeyGroupRange(),
                checkpointId,
                getSharedState(),
                getPrivateState(),
                getMetaDataStateHandle(),
                getCheckpointedSize(),
                copies());
    }
}
