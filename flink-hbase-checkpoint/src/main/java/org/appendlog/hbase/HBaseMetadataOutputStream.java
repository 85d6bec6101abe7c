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
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;

import java.io.IOException;

/**
 * Writes a checkpoint's {@code _metadata} as chunk rows, then commits it with a length row. Only
 * a committed metadata stream makes the checkpoint resolvable, so a job manager that dies while
 * writing it leaves no half checkpoint behind a pointer. The commit is conditional on the length
 * row being absent: it never replaces the commit of another run.
 */
final class HBaseMetadataOutputStream extends CheckpointMetadataOutputStream {

    private final HBaseStorageSettings settings;
    private final HBaseCheckpointPointer pointer;
    private final String metadataKey;
    private final ChunkedStreamWriter writer;
    private final FailedCheckpointDirectories failedCheckpoints;
    private final Runnable onCommitted;

    HBaseMetadataOutputStream(
            HBaseStorageSettings settings,
            HBaseCheckpointPointer pointer,
            FailedCheckpointDirectories failedCheckpoints,
            Runnable onCommitted) {
        this.settings = settings;
        this.pointer = pointer;
        this.failedCheckpoints = failedCheckpoints;
        this.onCommitted = onCommitted;
        this.metadataKey = RowKeys.metadataStream(pointer.checkpointDirectory());
        this.writer = new ChunkedStreamWriter(settings, metadataKey);
    }

    @Override
    public void write(int b) throws IOException {
        writer.write(b);
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
        writer.write(bytes, offset, length);
    }

    @Override
    public long getPos() {
        return writer.position();
    }

    @Override
    public void flush() {}

    @Override
    public void sync() throws IOException {
        writer.sync();
    }

    @Override
    public CompletedCheckpointStorageLocation closeAndFinalizeCheckpoint() throws IOException {
        writer.closeForResult();
        boolean committed;
        long length;
        try {
            length = writer.finish(false);
            committed =
                    CheckpointTables.open(settings)
                            .commitLengthIfAbsent(
                                    metadataKey, length, settings.durability.toHBase());
        } catch (IOException | RuntimeException e) {
            // Deletes the chunks unless finish() succeeded; then only the commit failed, and the
            // rows go with the failed checkpoint's directory (disposeOnFailure, and the sweep).
            writer.discard();
            throw new IOException("Could not write the metadata of checkpoint " + pointer, e);
        }
        if (!committed) {
            // Its chunks share their keys with ours: deleting them would delete the other's.
            throw committedByAnotherRun(pointer);
        }
        onCommitted.run();
        return new HBaseCompletedCheckpointStorageLocation(
                settings, pointer, length, failedCheckpoints);
    }

    /** The error of a checkpoint whose metadata rows another run committed. */
    static IOException committedByAnotherRun(HBaseCheckpointPointer pointer) {
        return new IOException(
                "HBase table '"
                        + pointer.table
                        + "' already holds the committed metadata of checkpoint "
                        + pointer.checkpointId
                        + " of job "
                        + pointer.jobId
                        + " ("
                        + pointer
                        + "), written by another run of the job under the same run id. The"
                        + " checkpoint fails and its rows stay as they are: they belong to the"
                        + " other run.");
    }

    /** Closing without finalizing abandons the metadata: its rows go. */
    @Override
    public void close() {
        writer.close();
    }
}
