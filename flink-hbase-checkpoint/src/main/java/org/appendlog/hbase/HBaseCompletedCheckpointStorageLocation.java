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

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.io.ObjectInputStream;

/** A completed checkpoint's rows: its pointer, its metadata, and how to delete all of it. */
final class HBaseCompletedCheckpointStorageLocation implements CompletedCheckpointStorageLocation {

    private static final long serialVersionUID = 1L;

    private static final Logger LOG =
            LoggerFactory.getLogger(HBaseCompletedCheckpointStorageLocation.class);

    private final HBaseStorageSettings settings;
    private final String pointer;
    private final String checkpointDirectory;
    private final long metadataLength;
    /**
     * The job's failed checkpoints, swept on every discard; only where this job manager completed
     * the checkpoint (a location resolved from a pointer, or read back from high availability,
     * has none).
     */
    @Nullable private final transient FailedCheckpointDirectories failedCheckpoints;

    /** A checkpoint resolved from its pointer. */
    HBaseCompletedCheckpointStorageLocation(
            HBaseStorageSettings settings, HBaseCheckpointPointer pointer, long metadataLength) {
        this(settings, pointer, metadataLength, null);
    }

    /** A checkpoint this job manager just completed. */
    HBaseCompletedCheckpointStorageLocation(
            HBaseStorageSettings settings,
            HBaseCheckpointPointer pointer,
            long metadataLength,
            @Nullable FailedCheckpointDirectories failedCheckpoints) {
        this.settings = settings;
        this.pointer = pointer.toString();
        this.checkpointDirectory = pointer.checkpointDirectory();
        this.metadataLength = metadataLength;
        this.failedCheckpoints = failedCheckpoints;
    }

    @Override
    public String getExternalPointer() {
        return pointer;
    }

    /** A plain file handle on the {@code hbase://} path: Flink's metadata reader needs nothing else. */
    @Override
    public FileStateHandle getMetadataHandle() {
        return new FileStateHandle(
                new Path(
                        HBaseCheckpointPointer.uri(
                                settings.table, RowKeys.metadataStream(checkpointDirectory))),
                metadataLength);
    }

    /**
     * Deletes every row left under the checkpoint (Flink discards the state handles first; this
     * also takes streams of failed attempts and the metadata), then sweeps the job's failed
     * checkpoints once more.
     */
    @Override
    public void disposeStorageLocation() throws IOException {
        int rows = CheckpointTables.open(settings).deleteDirectory(checkpointDirectory);
        LOG.debug("Disposed checkpoint {}: deleted {} remaining rows", pointer, rows);
        if (failedCheckpoints != null) {
            failedCheckpoints.sweep();
        }
    }

    /**
     * Flink keeps completed checkpoints, this location included, in its high-availability store,
     * and a restarted job manager reads them back before it discards them. When it only cleans up
     * after a job that ended (Flink's {@code CheckpointResourcesCleanupRunner}), it never creates
     * the job's checkpoint storage, so without this its {@code hbase://} file system would not
     * know the table of the handles, and their deletes (shared state above all) would fail and be
     * logged only. The settings travel with the checkpoint, so that works whatever configuration
     * the job manager was started with; the paths stay free of cluster addresses, which change.
     * They name the cluster as it was, so they never replace a registration of the same table by
     * the configuration or a running job.
     */
    private void readObject(ObjectInputStream in) throws IOException, ClassNotFoundException {
        in.defaultReadObject();
        CheckpointTables.registerIfAbsent(settings);
    }

    @Override
    public String toString() {
        return pointer;
    }
}
