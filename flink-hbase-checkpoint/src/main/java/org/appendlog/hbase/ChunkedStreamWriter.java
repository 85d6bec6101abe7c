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

import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.Durability;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Arrays;

/**
 * Cuts one state stream into chunks and writes each full chunk as a cell through a {@link
 * BufferedMutator}. Nothing reaches HBase until the first chunk is full, so a stream that ends
 * small can still be kept inline by its caller. Used by state and metadata streams alike.
 *
 * <p>Bytes are written by one thread, but a cancelled checkpoint discards its streams from
 * another (Flink closes them through the snapshot's closeable registry). Sending chunks, finishing
 * and discarding therefore hold the writer's lock: once discarded, no chunk reaches HBase after
 * the delete, and a finished stream, whose handle was returned, is never deleted.
 *
 * <p>It also keeps what the state and metadata streams share as {@code FSDataOutputStream}s: whether the
 * stream is closed, and that closing it without a result abandons it.
 */
final class ChunkedStreamWriter {

    private static final Logger LOG = LoggerFactory.getLogger(ChunkedStreamWriter.class);

    private static final int INITIAL_BUFFER = 4096;

    private final HBaseStorageSettings settings;
    private final String streamKey;
    private final Durability durability;
    private final int chunkSize;

    private byte[] buffer;
    private int buffered;
    private long written;
    /** Rows and value bytes handed to the mutator since its last flush, for the table's metrics. */
    private int unflushedRows;
    private long unflushedBytes;
    /** Opened with the first chunk: streams kept inline never connect to HBase. */
    private CheckpointTable table;
    private BufferedMutator mutator;
    private boolean discarded;
    private boolean finished;
    /** Closed by its stream: with a result ({@link #closeForResult}) or abandoned ({@link #close}). */
    private volatile boolean closed;

    ChunkedStreamWriter(HBaseStorageSettings settings, String streamKey) {
        this.settings = settings;
        this.streamKey = streamKey;
        this.durability = settings.durability.toHBase();
        this.chunkSize = settings.chunkSize;
        this.buffer = new byte[Math.min(chunkSize, INITIAL_BUFFER)];
    }

    String uri() {
        return HBaseCheckpointPointer.uri(settings.table, streamKey);
    }

    void write(int b) throws IOException {
        ensureOpen();
        ensureRoom();
        buffer[buffered++] = (byte) b;
    }

    void write(byte[] bytes, int offset, int length) throws IOException {
        ensureOpen();
        while (length > 0) {
            ensureRoom();
            int n = Math.min(length, buffer.length - buffered);
            System.arraycopy(bytes, offset, buffer, buffered, n);
            buffered += n;
            offset += n;
            length -= n;
        }
    }

    /** Makes room for at least one byte: grows the buffer up to a chunk, then ships the chunk. */
    private void ensureRoom() throws IOException {
        if (buffered < buffer.length) {
            return;
        }
        if (buffer.length < chunkSize) {
            buffer = Arrays.copyOf(buffer, (int) Math.min(chunkSize, 2L * buffer.length));
        } else {
            shipChunk();
            buffer = new byte[chunkSize];
        }
    }

    private synchronized void shipChunk() throws IOException {
        ensureNotDiscarded();
        if (mutator == null) {
            table = CheckpointTables.open(settings);
            mutator = table.newMutator(settings.writeBufferSize);
        }
        // The put keeps a reference to its array, so the chunk gets a fresh one.
        byte[] chunk = buffered == buffer.length ? buffer : Arrays.copyOf(buffer, buffered);
        try {
            mutator.mutate(table.chunkPut(streamKey, written, chunk, durability));
            unflushedRows++;
            unflushedBytes += chunk.length;
        } catch (IOException e) {
            table.metrics().failed(unflushedRows + 1);
            unflushedRows = 0;
            unflushedBytes = 0;
            throw new IOException(
                    "Could not write " + uri() + " at offset " + written, e);
        }
        written += buffered;
        // The caller allocates the next buffer only if more bytes come.
        buffer = null;
        buffered = 0;
    }

    long position() {
        return written + buffered;
    }

    /** True once any chunk went to HBase; the stream can no longer be kept inline. */
    boolean hasShippedChunks() {
        return written > 0;
    }

    /** The bytes of a stream that shipped no chunk yet. */
    byte[] bufferedBytes() {
        return Arrays.copyOf(buffer, buffered);
    }

    /** Sends every chunk written so far and waits until HBase has acknowledged them. */
    synchronized void sync() throws IOException {
        ensureOpen();
        if (mutator != null) {
            flushMutator();
        }
    }

    /**
     * Writes the last chunk, flushes, and returns the stream length. The stream is then durable.
     *
     * @param withLengthRow whether the stream's length row goes with the last chunk, in the same
     *     flush; readers compare it with the chunks they find. A metadata stream commits its
     *     length row itself, after this.
     */
    synchronized long finish(boolean withLengthRow) throws IOException {
        ensureNotDiscarded();
        if (buffered > 0) {
            shipChunk();
        }
        if (withLengthRow && mutator != null) {
            mutator.mutate(table.lengthPut(streamKey, written, durability));
            unflushedRows++;
            unflushedBytes += Long.BYTES;
        }
        if (mutator != null) {
            flushMutator();
            mutator.close();
            mutator = null;
        }
        finished = true;
        LOG.debug("Wrote {} bytes to {}", written, uri());
        return written;
    }

    /** Marks the stream closed, for its caller to finish it (or keep it inline). Fails if it was closed. */
    void closeForResult() throws IOException {
        ensureOpen();
        closed = true;
    }

    /** Closing without a result abandons the stream (e.g. a cancelled checkpoint): its rows go. */
    void close() {
        if (!closed) {
            closed = true;
            discard();
        }
    }

    private void ensureOpen() throws IOException {
        if (closed) {
            throw new IOException("Checkpoint stream " + uri() + " is already closed");
        }
    }

    private void ensureNotDiscarded() throws IOException {
        if (discarded) {
            throw new IOException("Checkpoint stream " + uri() + " was discarded while written");
        }
    }

    private void flushMutator() throws IOException {
        long start = System.nanoTime();
        try {
            mutator.flush();
            table.metrics().written(unflushedRows, unflushedBytes, System.nanoTime() - start);
        } catch (IOException e) {
            table.metrics().failed(unflushedRows);
            throw new IOException(
                    "Could not flush " + uri() + " (" + written + " bytes) to HBase",
                    e);
        } finally {
            unflushedRows = 0;
            unflushedBytes = 0;
        }
    }

    /**
     * Abandons the stream: drops unsent chunks and deletes the ones HBase may already hold. Does
     * nothing once the stream finished: its rows belong to the handle returned.
     */
    synchronized void discard() {
        if (finished || discarded) {
            return;
        }
        discarded = true;
        // A cancelled task closes its streams on the thread it interrupted: the flush would give
        // up at once, its puts landing after the delete. The interrupt is set again afterwards.
        boolean interrupted = Thread.interrupted();
        try {
            if (mutator != null) {
                try {
                    // close() flushes; the rows written are deleted right after.
                    mutator.close();
                } catch (IOException | RuntimeException e) {
                    LOG.debug("Closing the writer of abandoned stream {} failed", uri(), e);
                }
                mutator = null;
            }
            if (written > 0) {
                table.deleteStream(streamKey);
            }
        } catch (IOException | RuntimeException e) {
            LOG.warn(
                    "Could not delete the rows of abandoned stream {}; they stay until the"
                            + " checkpoint is discarded",
                    uri(),
                    e);
        } finally {
            if (interrupted) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
