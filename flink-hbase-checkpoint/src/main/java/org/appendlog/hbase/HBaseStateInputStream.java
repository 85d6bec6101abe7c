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

import org.apache.flink.core.fs.FSDataInputStream;

import javax.annotation.Nullable;

import java.io.FileNotFoundException;
import java.io.IOException;

/**
 * Reads a chunked state stream back as one seekable stream, fetching one chunk at a time.
 * Restores of keyed state seek to key-group offsets; a seek only moves the position, the chunk
 * holding it is fetched on the next read.
 *
 * <p>The stream ends at its recorded length: a position below it that no chunk row holds is a
 * lost row, and the read fails naming it, instead of ending the stream early. Streams written
 * by older versions have no length row; they end after their last chunk.
 */
final class HBaseStateInputStream extends FSDataInputStream {

    private final CheckpointTable table;
    private final String streamKey;
    /** Null for streams without a length row. */
    @Nullable private final Long length;

    private long position;
    private CheckpointTable.Chunk chunk;
    private boolean closed;

    private HBaseStateInputStream(
            CheckpointTable table,
            String streamKey,
            @Nullable Long length,
            @Nullable CheckpointTable.Chunk first) {
        this.table = table;
        this.streamKey = streamKey;
        this.length = length;
        this.chunk = first;
    }

    /**
     * Opens a stream, failing if it has no rows: the storage keeps empty streams inline, so a
     * stream without rows has been deleted.
     */
    static HBaseStateInputStream open(CheckpointTable table, String streamKey) throws IOException {
        Long length = table.committedLength(streamKey);
        CheckpointTable.Chunk first = table.chunkAt(streamKey, 0);
        if (first == null && length == null) {
            throw new FileNotFoundException(
                    "State stream "
                            + HBaseCheckpointPointer.uri(table.name(), streamKey)
                            + " has no rows in HBase (discarded, or its checkpoint never completed)");
        }
        HBaseStateInputStream stream = new HBaseStateInputStream(table, streamKey, length, first);
        if (first == null && length > 0) {
            throw stream.missingChunk();
        }
        return stream;
    }

    @Override
    public void seek(long desired) throws IOException {
        ensureOpen();
        if (desired < 0) {
            throw new IOException("Cannot seek to negative offset " + desired + " in " + uri());
        }
        position = desired;
    }

    @Override
    public long getPos() {
        return position;
    }

    @Override
    public int read() throws IOException {
        if (!loadChunkAtPosition()) {
            return -1;
        }
        return chunk.bytes[(int) (position++ - chunk.offset)] & 0xFF;
    }

    @Override
    public int read(byte[] buffer, int offset, int length) throws IOException {
        if (length == 0) {
            return 0;
        }
        if (!loadChunkAtPosition()) {
            return -1;
        }
        int start = (int) (position - chunk.offset);
        int n = Math.min(length, chunk.bytes.length - start);
        System.arraycopy(chunk.bytes, start, buffer, offset, n);
        position += n;
        return n;
    }

    @Override
    public int available() {
        return chunk != null && chunk.contains(position)
                ? (int) (chunk.offset + chunk.bytes.length - position)
                : 0;
    }

    /** Returns false at the end of the stream. */
    private boolean loadChunkAtPosition() throws IOException {
        ensureOpen();
        if (chunk != null && chunk.contains(position)) {
            return true;
        }
        try {
            chunk = table.chunkAt(streamKey, position);
        } catch (IOException e) {
            throw new IOException("Could not read " + uri() + " at offset " + position, e);
        }
        if (chunk == null && length != null && position < length) {
            throw missingChunk();
        }
        return chunk != null;
    }

    private IOException missingChunk() throws IOException {
        return new IOException(
                "State stream "
                        + uri()
                        + " has lost a chunk: its recorded length is "
                        + length
                        + " bytes, but no row of HBase table '"
                        + table.name()
                        + "' holds byte "
                        + position
                        + "; missing row '"
                        + table.missingChunkRow(streamKey, position)
                        + "'");
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("Stream " + uri() + " is closed");
        }
    }

    private String uri() {
        return HBaseCheckpointPointer.uri(table.name(), streamKey);
    }

    @Override
    public void close() {
        closed = true;
        chunk = null;
    }
}
