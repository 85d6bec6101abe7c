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

import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.SegmentedLog;

import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;

import java.io.IOException;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Writes a native savepoint: every live entry into one segment of the savepoint's own, which
 * refers to no batch of the log and shares nothing with checkpoints, as Flink's RocksDB backend
 * writes its native savepoints apart from its incremental checkpoints.
 */
final class SavepointStrategy {

    private final UUID backendId;
    private final KeyGroupRange keyGroupRange;
    private final SegmentedLog log;

    SavepointStrategy(UUID backendId, KeyGroupRange keyGroupRange, SegmentedLog log) {
        this.backendId = backendId;
        this.keyGroupRange = keyGroupRange;
        this.log = log;
    }

    SnapshotBatches write(
            AppendLogSnapshotResources captured, CheckpointStreamFactory streamFactory, CloseableRegistry registry)
            throws IOException {
        String segment = "savepoint-" + backendId + "-" + captured.checkpointId + ".seg";
        CheckpointStateOutputStream out =
                streamFactory.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE);
        registry.registerCloseable(out);
        out.write(BatchFormat.segmentHeader());
        BatchLocation location =
                new FullBatch(captured, keyGroupRange, log.compression())
                        .write(out, segment, BatchFormat.SEGMENT_HEADER_BYTES);
        StreamStateHandle handle = SnapshotHandleAssembler.closeAndGetHandle(out, registry);
        return new SnapshotBatches(
                List.of(location),
                Set.of(),
                List.of(HandleAndLocalPath.of(handle, segment)),
                handle.getStateSize());
    }
}
