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

import java.util.List;
import java.util.UUID;

/**
 * The task-local copy of a checkpoint's handle, kept when Flink's local backup is on. The log is
 * on a shared file system already, so there is nothing to copy: this refers to the same segments
 * and manifest, by their real handles (not the placeholders the JobManager resolves), and owns
 * none of them, so Flink's discard of local state deletes nothing. A recovery from it reads what
 * a recovery from the JobManager's copy reads; what it is for is Flink's changelog backend, which
 * restores the local copy of its materialization when it has a local changelog, and would
 * otherwise find this backend's state missing from it.
 */
public final class LocalReferenceHandle extends IncrementalRemoteKeyedStateHandle {

    private static final long serialVersionUID = 1L;

    LocalReferenceHandle(
            UUID backendId,
            KeyGroupRange keyGroups,
            long checkpointId,
            List<HandleAndLocalPath> segments,
            List<HandleAndLocalPath> privateState,
            StreamStateHandle manifest,
            long checkpointedSize) {
        super(backendId, keyGroups, checkpointId, segments, privateState, manifest, checkpointedSize);
    }

    /** The files belong to the JobManager's copy of the checkpoint. */
    @Override
    public void discardState() {}

    /** Stays a reference when Flink's changelog backend binds it to a later checkpoint. */
    @Override
    public CheckpointBoundKeyedStateHandle rebound(long checkpointId) {
        return new LocalReferenceHandle(
                getBackendIdentifier(),
                getKeyGroupRange(),
                checkpointId,
                getSharedState(),
                getPrivateState(),
                getMetaDataStateHandle(),
                getCheckpointedSize());
    }
}
