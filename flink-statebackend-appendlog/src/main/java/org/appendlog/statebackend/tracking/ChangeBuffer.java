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

package org.appendlog.statebackend.tracking;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.concurrent.BlockingDeque;
import java.util.concurrent.Executor;
import java.util.concurrent.LinkedBlockingDeque;

/**
 * The writes of states with immutable values since the last capture, serialized as they happen
 * into an append-only buffer (like the changelog backend's in-memory log): a write costs the task
 * thread a few sequential byte copies and keeps no object alive, and the barrier only swaps the
 * buffer. Only the latest record of each entry reaches the log ({@link IntervalWrites}), so a key
 * written a million times between two checkpoints is still one record.
 *
 * <p>The task appends every record to one chunk at a time; each chunk it fills goes to {@code
 * deduplicator}, a background thread, which sorts the chunk's records into partitions of the key
 * groups and deduplicates them while the task goes on; the checkpoint is left with the last
 * chunk. The task writes into one chunk, not one per partition, because writing into many open
 * chunks at once costs it far more than the same bytes in one (see
 * docs/decisions/sorting-on-the-task-thread.md). Records are
 * {@code [key group: short][state: short][key and namespace length: int][key and namespace][value
 * length: int, -1 for a removal][value]} and never span chunks. Chunks come back for reuse, so
 * they settle in the old generation instead of being copied by every young collection. The
 * partitions' tables do not: each interval grows its own, and they go once its checkpoint has
 * emitted them, so that the heap holds one interval's tables, not two (see
 * docs/decisions/change-buffer-tables.md). When the buffer outgrows {@code limitBytes} (a long
 * checkpoint interval), it is deduplicated in place.
 */
public final class ChangeBuffer {

    private static final Logger LOG = LoggerFactory.getLogger(ChangeBuffer.class);

    /**
     * Chunks of 32 KB: small enough that the chunks still open at a barrier, which the checkpoint
     * sorts and deduplicates itself, hold few records.
     */
    static final int CHUNK_BYTES = 1 << 15;
    /** Recycled chunks kept for reuse: 64 MB. */
    private static final int MAX_POOLED = 2048;
    /**
     * Bytes between two drains: a partition keeps its records at int offsets, and should every
     * write be of a distinct entry of one partition, it keeps them all.
     */
    private static final long MAX_BYTES = 1L << 30;

    /**
     * Recycled chunks, the last one recycled taken first: it is still in the cache the cores
     * share, so that refilling it evicts none of the task's state; taken oldest first, every chunk
     * of the pool would go round in turn, fresh to the cache each time.
     */
    private final BlockingDeque<byte[]> pool = new LinkedBlockingDeque<>(MAX_POOLED);
    private final DataOutputSerializer scratch = new DataOutputSerializer(256);
    private final Executor deduplicator;
    private final OpenChunk chunk = new OpenChunk();
    private volatile boolean keepsSpares = true;
    private IntervalWrites changes = new IntervalWrites(this);
    private long limitBytes;
    private int records;
    private long bytes;

    /**
     * @param deduplicator sorts and deduplicates filled chunks, off the task thread
     */
    public ChangeBuffer(long limitBytes, Executor deduplicator) {
        this.limitBytes = limitBytes;
        this.deduplicator = deduplicator;
    }

    /** Appends the new value of an entry; a null value records its removal. */
    public void write(
            int stateId,
            int keyGroup,
            Object key,
            Object namespace,
            @Nullable Object value,
            TypeSerializer<Object> keySerializer,
            TypeSerializer<Object> namespaceSerializer,
            TypeSerializer<Object> valueSerializer)
            throws IOException {
        if (changes.lostRecords()) {
            return; // the interval is given up; the checkpoint appends every live entry
        }
        scratch.clear();
        scratch.writeShort(keyGroup);
        scratch.writeShort(stateId);
        scratch.writeInt(0);
        keySerializer.serialize(key, scratch);
        namespaceSerializer.serialize(namespace, scratch);
        int valueAt = scratch.length();
        scratch.writeIntUnsafe(valueAt - IntervalWrites.HEADER_BYTES, 4);
        scratch.writeInt(-1);
        if (value != null) {
            valueSerializer.serialize(value, scratch);
            scratch.writeIntUnsafe(scratch.length() - valueAt - 4, valueAt);
        }
        append(scratch.getSharedBuffer(), 0, scratch.length());
        if (bytes > limitBytes) {
            deduplicate();
        }
    }

    /** Copies one encoded record into the current chunk. */
    void append(byte[] record, int offset, int length) {
        if (!chunk.fits(length)) {
            if (handOver()) {
                deduplicator.execute(changes::catchUp);
            }
            if (bytes + length > MAX_BYTES) {
                throw new IllegalStateException(
                        "The appendlog change buffer holds "
                                + bytes
                                + " bytes of distinct changes since the last checkpoint, its"
                                + " maximum; checkpoint more often");
            }
            chunk.open(takeChunk(length));
        }
        chunk.append(record, offset, length);
        records++;
        bytes += length;
    }

    /** Hands the current chunk over, if it holds records; returns whether it did. */
    private boolean handOver() {
        Chunk filled = chunk.close(this::recycle);
        if (filled != null) {
            changes.add(filled);
        }
        return filled != null;
    }

    /** Bytes of the records written since the last {@link #drain}. */
    public long bytes() {
        return bytes;
    }

    /** Hands over the records written so far and starts an empty buffer. */
    public IntervalWrites drain() {
        // The last chunk is left to the checkpoint's asynchronous phase, which needs it anyway.
        handOver();
        IntervalWrites drained = changes;
        changes = new IntervalWrites(this);
        records = 0;
        bytes = 0;
        return drained;
    }

    /** Keeps only the latest record of each entry; grows the limit if that did not halve it. */
    private void deduplicate() {
        long before = bytes;
        long start = System.nanoTime();
        IntervalWrites all = drain();
        try {
            all.forEachLatest(this::append);
        } catch (IOException e) {
            // The writes since the last checkpoint are gone from the buffer, not from the heap.
            changes.lose(e.getCause());
        }
        all.recycle();
        boolean grow = bytes > limitBytes / 2;
        // This holds up the task thread: worth a line in the log, with the bound it leads to.
        LOG.info(
                "The change buffer reached {} bytes of writes since the last checkpoint; keeping the"
                        + " latest write of each entry left {} bytes ({} ms on the task thread){}",
                before,
                bytes,
                (System.nanoTime() - start) / 1_000_000,
                grow ? "; its limit doubles to " + limitBytes * 2 + " bytes" : "");
        if (grow) {
            limitBytes *= 2;
        }
    }

    /** A chunk for {@code length} bytes and more: a pooled one, unless the record is larger. */
    byte[] takeChunk(int length) {
        byte[] pooled = length > CHUNK_BYTES ? null : pool.pollFirst();
        return pooled != null ? pooled : new byte[Math.max(CHUNK_BYTES, length)];
    }

    void recycle(byte[] spent) {
        if (spent.length == CHUNK_BYTES && keepsSpares) {
            pool.offerFirst(spent); // dropped if the pool is full
            if (!keepsSpares) {
                pool.remove(spent); // the pause began meanwhile
            }
        }
    }

    /**
     * Whether chunks are kept for reuse: not while nothing is written for longer than an interval
     * (the tracker paused), so that an idle buffer holds no memory. The background thread may hand
     * back the last interval's after the pause began.
     */
    void keepSpares(boolean keep) {
        keepsSpares = keep;
        if (!keep) {
            pool.clear();
        }
    }

    /**
     * Bytes of the heap the buffer holds: its pooled chunks and the current interval's partitions
     * (as of the last chunk sorted). Any thread; a gauge's reading.
     */
    long heapBytes() {
        return (long) pool.size() * CHUNK_BYTES + changes.heapBytes();
    }

    /** Records written since the last capture (before deduplication). */
    public int recordCount() {
        return records;
    }
}
