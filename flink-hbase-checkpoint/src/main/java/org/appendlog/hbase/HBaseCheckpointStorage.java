package org.appendlog.hbase;

import org.apache.flink.api.common.JobID;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.filesystem.AbstractFsCheckpointStorageAccess;

import javax.annotation.Nullable;

import java.io.FileNotFoundException;
import java.io.IOException;

/**
 * Checkpoint storage whose checkpoint state streams and {@code _metadata} are HBase rows, written
 * with a configurable WAL durability. Savepoints go to a file system directory ({@code
 * execution.checkpointing.savepoint-dir}), because they are meant to outlive and move between
 * storages.
 *
 * <p>Select it with {@code state.checkpoint-storage:
 * org.appendlog.hbase.HBaseCheckpointStorageFactory}; see {@link HBaseCheckpointStorageOptions}.
 */
public final class HBaseCheckpointStorage implements CheckpointStorage {

    private static final long serialVersionUID = 1L;

    private final HBaseStorageSettings settings;
    @Nullable private final String savepointDirectory;

    HBaseCheckpointStorage(HBaseStorageSettings settings, @Nullable String savepointDirectory) {
        this.settings = settings;
        this.savepointDirectory = savepointDirectory;
    }

    @Override
    public CheckpointStorageAccess createCheckpointStorage(JobID jobId) {
        // Task managers create this before restoring: from here on, the hbase:// state handles
        // in restored metadata resolve to this table.
        CheckpointTables.register(settings);
        return new HBaseCheckpointStorageAccess(
                this,
                settings,
                jobId,
                savepointDirectory == null ? null : new Path(savepointDirectory));
    }

    /**
     * Resolves {@code hbase://<table>/<job-id>/<run>/chk-<n>} pointers (and those without a run,
     * of older versions) to retained checkpoints, and any other pointer as a file system savepoint
     * or checkpoint directory.
     */
    @Override
    public CompletedCheckpointStorageLocation resolveCheckpoint(String pointer) throws IOException {
        if (!HBaseCheckpointPointer.isHBasePointer(pointer)) {
            return AbstractFsCheckpointStorageAccess.resolveCheckpointPointer(pointer);
        }
        HBaseCheckpointPointer parsed;
        try {
            parsed = HBaseCheckpointPointer.parse(pointer);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
        if (!parsed.table.equals(settings.table)) {
            throw new IOException(
                    "Checkpoint "
                            + pointer
                            + " is in HBase table '"
                            + parsed.table
                            + "' but this job's checkpoint storage uses table '"
                            + settings.table
                            + "'. Set '"
                            + HBaseCheckpointStorageOptions.TABLE.key()
                            + ": "
                            + parsed.table
                            + "' to restore it.");
        }
        Long metadataLength =
                CheckpointTables.open(settings)
                        .committedLength(RowKeys.metadataStream(parsed.checkpointDirectory()));
        if (metadataLength == null) {
            throw new FileNotFoundException(
                    "No completed checkpoint at "
                            + pointer
                            + ": HBase table '"
                            + settings.table
                            + "' has no committed _metadata for it (never completed, or discarded).");
        }
        return new HBaseCompletedCheckpointStorageLocation(settings, parsed, metadataLength);
    }

    @Override
    public String toString() {
        return "HBaseCheckpointStorage{"
                + settings
                + ", savepoints: "
                + (savepointDirectory == null ? "none" : savepointDirectory)
                + '}';
    }
}
