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

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStateToolset;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.NotDuplicatingCheckpointStateToolset;
import org.apache.flink.runtime.state.filesystem.AbstractFsCheckpointStorageAccess;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStorageLocation;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.UUID;

/**
 * One job's view of the HBase checkpoint storage, on the job manager and on every task manager.
 * Checkpoints go to HBase; savepoints use Flink's file system savepoint code (inherited), into
 * the configured savepoint directory.
 */
final class HBaseCheckpointStorageAccess extends AbstractFsCheckpointStorageAccess {

    /** Buffer of the file streams that write savepoints. */
    private static final int SAVEPOINT_WRITE_BUFFER = 4096;

    private final HBaseCheckpointStorage storage;
    private final HBaseStorageSettings settings;
    private final JobID jobId;
    /** The run of the checkpoints this access creates (on the job manager). */
    private final String run;
    /** Used on the job manager, which creates, disposes and discards the job's checkpoints. */
    private final FailedCheckpointDirectories failedCheckpoints;

    HBaseCheckpointStorageAccess(
            HBaseCheckpointStorage storage,
            HBaseStorageSettings settings,
            JobID jobId,
            @Nullable Path savepointDirectory) {
        this(storage, settings, jobId, savepointDirectory, RunId.random());
    }

    /** With a given run: tests use it to make two accesses share one. */
    HBaseCheckpointStorageAccess(
            HBaseCheckpointStorage storage,
            HBaseStorageSettings settings,
            JobID jobId,
            @Nullable Path savepointDirectory,
            String run) {
        super(jobId, savepointDirectory);
        this.storage = storage;
        this.settings = settings;
        this.jobId = jobId;
        this.run = run;
        this.failedCheckpoints = new FailedCheckpointDirectories(settings);
    }

    @Override
    public boolean supportsHighlyAvailableStorage() {
        return true;
    }

    /** Job manager, before the first checkpoint: connect and create the table, or fail the job's start. */
    @Override
    public void initializeBaseLocationsForCheckpoint() throws IOException {
        CheckpointTables.open(settings);
    }

    @Override
    public CheckpointStorageLocation initializeLocationForCheckpoint(long checkpointId) {
        return location(run, checkpointId);
    }

    private HBaseCheckpointStorageLocation location(String run, long checkpointId) {
        return new HBaseCheckpointStorageLocation(
                settings,
                HBaseCheckpointPointer.of(settings.table, jobId, run, checkpointId),
                failedCheckpoints);
    }

    @Override
    public CompletedCheckpointStorageLocation resolveCheckpoint(String pointer) throws IOException {
        return storage.resolveCheckpoint(pointer);
    }

    @Override
    public CheckpointStorageLocation initializeLocationForSavepoint(
            long checkpointId, @Nullable String externalLocationPointer) throws IOException {
        if (externalLocationPointer == null && !hasDefaultSavepointLocation()) {
            throw new IllegalStateException(
                    "A savepoint was requested but no savepoint directory is configured. The HBase"
                            + " checkpoint storage writes savepoints to a file system: set '"
                            + CheckpointingOptions.SAVEPOINT_DIRECTORY.key()
                            + "' or pass a target directory.");
        }
        return super.initializeLocationForSavepoint(checkpointId, externalLocationPointer);
    }

    @Override
    protected CheckpointStorageLocation createSavepointLocation(FileSystem fs, Path location) {
        return fileSystemLocation(fs, location, encodePathAsReference(location));
    }

    @Override
    public CheckpointStreamFactory resolveCheckpointStorageLocation(
            long checkpointId, CheckpointStorageLocationReference reference) throws IOException {
        // Flink's tasks get the reference of the job manager's location, which names its run.
        // Callers without one (tests of state backends) write under this access's own run.
        if (reference.isDefaultReference()) {
            return location(run, checkpointId);
        }
        String referencedRun = RunId.fromReference(reference);
        if (referencedRun != null) {
            return location(referencedRun, checkpointId);
        }
        // Otherwise a savepoint's reference: the path of its directory.
        Path path = decodePathFromReference(reference);
        return fileSystemLocation(path.getFileSystem(), path, reference);
    }

    private FsCheckpointStorageLocation fileSystemLocation(
            FileSystem fs, Path path, CheckpointStorageLocationReference reference) {
        return new FsCheckpointStorageLocation(
                fs,
                path,
                path,
                path,
                reference,
                settings.inlineThreshold,
                Math.max(SAVEPOINT_WRITE_BUFFER, settings.inlineThreshold));
    }

    @Override
    public CheckpointStateOutputStream createTaskOwnedStateStream() {
        return new HBaseCheckpointStateOutputStream(
                settings, RowKeys.taskOwnedDirectory(jobId) + "/" + UUID.randomUUID());
    }

    @Override
    public CheckpointStateToolset createTaskOwnedCheckpointStateToolset() {
        return new NotDuplicatingCheckpointStateToolset();
    }
}
