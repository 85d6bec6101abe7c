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

import org.appendlog.statebackend.log.CopyingOutputStream;
import org.appendlog.statebackend.log.LocalLogCopy;
import org.appendlog.statebackend.log.SegmentedLog;

import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.memory.DataOutputViewStreamWrapper;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StreamStateHandle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static org.appendlog.statebackend.log.BatchLocation.segmentsOf;

/**
 * Makes a snapshot's handle once its batches are written: writes the manifest (state meta data,
 * timers, the batches it lists, the writer lineage) and lists the segments as shared state, the
 * ones a checkpoint refers to before as placeholders, in the order the JobManager registers
 * them; with local backup, a {@link LocalCopyHandle} too.
 */
final class SnapshotHandleAssembler {

    private static final Logger LOG = LoggerFactory.getLogger(SnapshotHandleAssembler.class);

    private final UUID backendId;
    private final KeyGroupRange keyGroupRange;
    private final SegmentedLog log;
    /** Flink's local backup is on: checkpoints also hand Flink a {@link LocalCopyHandle}. */
    private final boolean localBackup;
    /** The size of the last checkpoint's timers: the next one's buffer starts at that size. */
    private volatile int lastTimerBytes;

    SnapshotHandleAssembler(
            UUID backendId, KeyGroupRange keyGroupRange, SegmentedLog log, boolean localBackup) {
        this.backendId = backendId;
        this.keyGroupRange = keyGroupRange;
        this.log = log;
        this.localBackup = localBackup;
    }

    SnapshotResult<KeyedStateHandle> assemble(
            AppendLogSnapshotResources captured,
            SnapshotBatches written,
            CheckpointStreamFactory streamFactory,
            CloseableRegistry registry)
            throws IOException {
        long checkpointId = captured.checkpointId;
        boolean savepoint = captured.mode == AppendLogSnapshotResources.Mode.SAVEPOINT;
        LocalLogCopy localCopy = localBackup && !savepoint ? log.localCopy() : null;
        CheckpointStateOutputStream out =
                streamFactory.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE);
        registry.registerCloseable(out);
        CopyingOutputStream manifestCopy =
                localCopy == null ? null : localCopy.copyingManifest(out, checkpointId);
        OutputStream manifestOut = manifestCopy == null ? out : manifestCopy;
        long timersStart = System.nanoTime();
        byte[] timers = captured.timers.toBytes(lastTimerBytes);
        lastTimerBytes = timers.length;
        long timersMillis = (System.nanoTime() - timersStart) / 1_000_000;
        new CheckpointManifest(
                        captured.metadata,
                        timers,
                        written.batches,
                        log.lineage().with(backendId, checkpointId))
                .write(new DataOutputViewStreamWrapper(manifestOut));
        if (manifestCopy != null) {
            manifestCopy.closeCopy();
        }
        StreamStateHandle manifest = closeAndGetHandle(out, registry);
        log.restrictManifest(manifest);
        LOG.debug(
                "Checkpoint {} wrote its manifest ({} bytes, {} of them timers, serialized in {} ms)"
                        + " referring to {} batch(es)",
                checkpointId,
                manifest.getStateSize(),
                timers.length,
                timersMillis,
                written.batches.size());

        Set<String> segmentNames = segmentsOf(written.batches);
        List<HandleAndLocalPath> sharedState = new ArrayList<>();
        if (!savepoint) {
            for (String segment : segmentNames) {
                HandleAndLocalPath shared =
                        HandleAndLocalPath.of(sharedHandle(segment, written.placeholders), segment);
                // What this checkpoint alone refers to comes first. The JobManager registers the
                // list in order and stops at a placeholder it refuses (a concurrent checkpoint's
                // completion unregistered that segment): what it registered before Flink deletes
                // once unused; what came after, neither Flink nor the task would ever delete.
                if (shared.getHandle() instanceof PlaceholderStreamStateHandle) {
                    sharedState.add(shared);
                } else {
                    sharedState.add(0, shared);
                }
            }
        }
        long checkpointedSize = written.appended + manifest.getStateSize();
        IncrementalRemoteKeyedStateHandle handle =
                new IncrementalRemoteKeyedStateHandle(
                        backendId,
                        keyGroupRange,
                        checkpointId,
                        sharedState,
                        written.privateState,
                        manifest,
                        checkpointedSize);
        if (!localBackup || savepoint) {
            return SnapshotResult.of(handle);
        }
        List<HandleAndLocalPath> segments = new ArrayList<>();
        for (String segment : segmentNames) {
            segments.add(HandleAndLocalPath.of(log.handle(segment), segment));
        }
        File copies = null;
        StreamStateHandle localManifest = manifest;
        if (localCopy != null) {
            copies = localCopy.keep(checkpointId, segmentNames, log.activeSegment());
            localManifest = localCopy.manifest(checkpointId, manifest);
        }
        return SnapshotResult.withLocalState(
                handle,
                new LocalCopyHandle(
                        backendId,
                        keyGroupRange,
                        checkpointId,
                        segments,
                        written.privateState,
                        localManifest,
                        checkpointedSize,
                        copies));
    }

    /**
     * How this checkpoint's handle lists {@code segment}. A segment that the last completed
     * checkpoint refers to is listed as a placeholder, as RocksDB lists the files it uploaded
     * before: should the task discard this checkpoint before the JobManager registered it (the
     * task fails, the checkpoint is aborted), Flink deletes the shared state the handle lists, and
     * must find only what this checkpoint alone wrote. The JobManager swaps in the registered
     * handle, and refuses the acknowledgement if it has none.
     */
    private StreamStateHandle sharedHandle(String segment, Set<String> placeholders) {
        StreamStateHandle handle = log.handle(segment);
        return placeholders.contains(segment)
                ? new PlaceholderStreamStateHandle(
                        handle.getStreamStateHandleID(), handle.getStateSize(), false)
                : handle;
    }

    static StreamStateHandle closeAndGetHandle(
            CheckpointStateOutputStream out, CloseableRegistry registry) throws IOException {
        if (!registry.unregisterCloseable(out)) {
            throw new IOException("Checkpoint was cancelled while writing " + out);
        }
        return out.closeAndGetHandle();
    }
}
