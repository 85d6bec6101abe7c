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

import org.apache.flink.runtime.state.CheckpointMetadataOutputStream;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.StreamStateHandle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.UUID;

/**
 * Where one checkpoint's state goes: exclusive streams under {@code <job>/<run>/chk-<n>/}, shared
 * ones (incremental RocksDB files, owned by Flink's shared state registry) under {@code
 * <job>/shared/} so that deleting a checkpoint never deletes state a later checkpoint still uses.
 *
 * <p>The location is computed from the job, the run and the checkpoint id; the run reaches the
 * task managers in the location reference, from which they build the same object.
 *
 * <p>A directory whose metadata another run committed is never written into nor deleted: the run
 * makes that impossible unless two runs drew the same id, and then the commit (conditional on the
 * metadata being absent) and the checks below fail the checkpoint instead.
 */
final class HBaseCheckpointStorageLocation implements CheckpointStorageLocation {

    private static final Logger LOG = LoggerFactory.getLogger(HBaseCheckpointStorageLocation.class);

    private final HBaseStorageSettings settings;
    private final HBaseCheckpointPointer pointer;
    private final FailedCheckpointDirectories failedCheckpoints;
    /** Set once this location's metadata was committed: its rows are this run's to delete. */
    private volatile boolean committed;

    HBaseCheckpointStorageLocation(
            HBaseStorageSettings settings,
            HBaseCheckpointPointer pointer,
            FailedCheckpointDirectories failedCheckpoints) {
        this.settings = settings;
        this.pointer = pointer;
        this.failedCheckpoints = failedCheckpoints;
    }

    @Override
    public CheckpointStateOutputStream createCheckpointStateOutputStream(CheckpointedStateScope scope) {
        String directory =
                scope == CheckpointedStateScope.SHARED
                        ? RowKeys.sharedDirectory(pointer.jobId)
                        : pointer.checkpointDirectory();
        return new HBaseCheckpointStateOutputStream(settings, directory + "/" + UUID.randomUUID());
    }

    @Override
    public boolean canFastDuplicate(StreamStateHandle stateHandle, CheckpointedStateScope scope) {
        return false;
    }

    @Override
    public List<StreamStateHandle> duplicate(
            List<StreamStateHandle> stateHandles, CheckpointedStateScope scope) {
        throw new UnsupportedOperationException(
                "The HBase checkpoint storage cannot duplicate state handles");
    }

    /** Fails, before any metadata row is written, if another run committed this checkpoint. */
    @Override
    public CheckpointMetadataOutputStream createMetadataOutputStream() throws IOException {
        if (committedByAnotherRun()) {
            throw HBaseMetadataOutputStream.committedByAnotherRun(pointer);
        }
        return new HBaseMetadataOutputStream(
                settings, pointer, failedCheckpoints, () -> committed = true);
    }

    @Override
    public void disposeOnFailure() throws IOException {
        String directory = pointer.checkpointDirectory();
        boolean othersCommit;
        try {
            othersCommit = committedByAnotherRun();
        } catch (IOException e) {
            // HBase did not answer: the next sweep deletes the rows once it does.
            failedCheckpoints.add(directory);
            throw e;
        }
        if (othersCommit) {
            LOG.warn(
                    "Not deleting the rows of failed checkpoint {}: another run committed a"
                            + " checkpoint in the same HBase rows",
                    pointer);
            return;
        }
        // Remembered first: if the delete fails, the next sweep tries again.
        failedCheckpoints.add(directory);
        int rows = CheckpointTables.open(settings).deleteDirectory(directory);
        LOG.debug("Disposed failed checkpoint {}: deleted {} rows", pointer, rows);
    }

    private boolean committedByAnotherRun() throws IOException {
        return !committed
                && CheckpointTables.open(settings)
                                .committedLength(RowKeys.metadataStream(pointer.checkpointDirectory()))
                        != null;
    }

    @Override
    public CheckpointStorageLocationReference getLocationReference() {
        return RunId.reference(pointer.run);
    }

    @Override
    public String toString() {
        return pointer.toString();
    }
}
