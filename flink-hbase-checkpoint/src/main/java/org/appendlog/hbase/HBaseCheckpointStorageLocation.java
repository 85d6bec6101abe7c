package org.appendlog.hbase;

import org.apache.flink.api.common.JobID;
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
 * Where one checkpoint's state goes: exclusive streams under {@code <job>/chk-<n>/}, shared ones
 * (incremental RocksDB files, owned by Flink's shared state registry) under {@code <job>/shared/}
 * so that deleting a checkpoint never deletes state a later checkpoint still uses.
 *
 * <p>The location is computed from the job and checkpoint id alone, so the task managers get the
 * default reference and build the same object.
 */
final class HBaseCheckpointStorageLocation implements CheckpointStorageLocation {

    private static final Logger LOG = LoggerFactory.getLogger(HBaseCheckpointStorageLocation.class);

    private final HBaseStorageSettings settings;
    private final HBaseCheckpointPointer pointer;
    private final JobID jobId;
    private final FailedCheckpointDirectories failedCheckpoints;

    HBaseCheckpointStorageLocation(
            HBaseStorageSettings settings,
            JobID jobId,
            long checkpointId,
            FailedCheckpointDirectories failedCheckpoints) {
        this.settings = settings;
        this.jobId = jobId;
        this.failedCheckpoints = failedCheckpoints;
        this.pointer = HBaseCheckpointPointer.of(settings.table, jobId, checkpointId);
    }

    @Override
    public CheckpointStateOutputStream createCheckpointStateOutputStream(CheckpointedStateScope scope) {
        String directory =
                scope == CheckpointedStateScope.SHARED
                        ? RowKeys.sharedDirectory(jobId)
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

    @Override
    public CheckpointMetadataOutputStream createMetadataOutputStream() {
        return new HBaseMetadataOutputStream(settings, pointer, failedCheckpoints);
    }

    @Override
    public void disposeOnFailure() throws IOException {
        // Remembered first: if the delete fails, the next sweep tries again.
        failedCheckpoints.add(pointer.checkpointDirectory());
        int rows = CheckpointTables.open(settings).deleteDirectory(pointer.checkpointDirectory());
        LOG.debug("Disposed failed checkpoint {}: deleted {} rows", pointer, rows);
    }

    @Override
    public CheckpointStorageLocationReference getLocationReference() {
        return CheckpointStorageLocationReference.getDefault();
    }

    @Override
    public String toString() {
        return pointer.toString();
    }
}
