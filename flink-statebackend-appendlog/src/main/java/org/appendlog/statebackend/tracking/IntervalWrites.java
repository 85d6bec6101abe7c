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

import org.appendlog.statebackend.memory.KeyBytes;

import org.apache.flink.util.ExceptionUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.function.Consumer;

/**
 * The writes of one checkpoint interval: the records that a {@link ChangeBuffer} takes between
 * two barriers (or two in-place deduplications). The task thread hands over
 * each chunk it fills; {@link #catchUp}, on a background thread, sorts the chunk's records into
 * {@link #PARTITIONS} partitions by key group, each of which keeps the latest record of every
 * entry in a table small enough for the processor's cache ({@link ChangePartition}), comparing
 * encoded bytes, never objects. Read once, in the asynchronous phase: {@link #forEachLatest}.
 *
 * <p>Should sorting fail (the background thread runs out of memory growing a table), the records
 * are {@linkplain #lostRecords() lost}: the heap still holds every write, so the checkpoint
 * appends all live entries instead of these changes.
 */
public final class IntervalWrites {

    private static final Logger LOG = LoggerFactory.getLogger(IntervalWrites.class);

    /** Key groups are spread over this many partitions (key group modulo), deduplicated apart. */
    static final int PARTITIONS = 64;
    /** Key group (2 bytes), state (2 bytes), key and namespace length (4 bytes). */
    static final int HEADER_BYTES = 8;

    /** Receives one record: its encoding is {@code buffer[offset, offset + length)}. */
    public interface RecordVisitor {
        void accept(byte[] buffer, int offset, int length);
    }

    private final ChangeBuffer owner;
    /** Chunks the task thread handed over that are not sorted into the partitions yet. */
    private final Queue<Chunk> filled = new ConcurrentLinkedQueue<>();
    /** Task thread, until the drain. */
    private int records;
    /**
     * Records of the chunks sorted so far, and the distinct entries they hold at most and at
     * least: written by {@link #catchUp}, read by the task thread for {@link #distinctEstimate}
     * and {@link #distinctAtLeast}.
     */
    private volatile int sortedRecords;
    private volatile int sortedEntriesAtMost;
    private volatile int sortedEntriesAtLeast;
    /** Bytes of the partitions' tables and of the chunks not sorted yet, as of the last sort. */
    private volatile long heapBytes;

    // Guarded by this: whoever holds the lock catches up, in the order the chunks were filled.
    /**
     * Taken when the first chunk is sorted, each partition when its first record is: the
     * background thread grows any new tables.
     */
    @Nullable private ChangePartition[] partitions;
    /** Set when no checkpoint will read the records. */
    private volatile boolean discarded;
    /** Why records were lost, if they were: nothing of them can be written any more. */
    @Nullable private volatile Throwable lost;

    IntervalWrites(ChangeBuffer owner) {
        this.owner = owner;
    }

    /** Task thread: a chunk is full, or the barrier came; the chunk is not written any more. */
    void add(Chunk chunk) {
        filled.add(chunk);
        records += chunk.records;
    }

    public int recordCount() {
        return records;
    }

    /** Bytes of the partitions' tables and arenas as of the last chunk sorted. Any thread. */
    long heapBytes() {
        return heapBytes;
    }

    /**
     * No checkpoint will read the records: the background thread stops sorting them, and {@link
     * #recycle} may follow at its leisure. Any thread.
     */
    public void discard() {
        discarded = true;
    }

    /** Sorts the chunks handed over so far into the partitions; the chunks go back for reuse. */
    synchronized void catchUp() {
        if (lost != null || discarded) {
            recycleFilled();
            return;
        }
        try {
            Chunk chunk;
            while (!discarded && (chunk = filled.poll()) != null) {
                sort(chunk);
            }
        } catch (Throwable t) {
            lose(t);
            ExceptionUtils.rethrowIfFatalError(t);
        }
    }

    private void sort(Chunk chunk) {
        if (partitions == null) {
            partitions = new ChangePartition[PARTITIONS];
        }
        byte[] bytes = chunk.bytes;
        int at = 0;
        while (at < chunk.used) {
            int length = recordLength(bytes, at);
            partition(keyGroup(bytes, at) % PARTITIONS).append(bytes, at, length);
            at += length;
        }
        owner.recycle(bytes);
        int atMost = 0;
        int atLeast = 0;
        long tables = 0;
        for (ChangePartition partition : partitions) {
            if (partition != null) {
                atMost += partition.entriesAtMost();
                atLeast += partition.entriesAtLeast();
                tables += partition.heapBytes();
            }
        }
        heapBytes = tables;
        sortedEntriesAtMost = atMost;
        sortedEntriesAtLeast = atLeast;
        sortedRecords += chunk.records;
    }

    /**
     * The partition, made when its first record comes: an interval of few writes, as most are on
     * a job with many operators per TaskManager, holds the tables of the partitions it wrote to.
     */
    private ChangePartition partition(int index) {
        ChangePartition partition = partitions[index];
        if (partition == null) {
            partition = new ChangePartition(owner);
            partitions[index] = partition;
        }
        return partition;
    }

    /** Gives the records up: {@code cause} lost some of them. */
    synchronized void lose(Throwable cause) {
        if (lost != null) {
            return;
        }
        lost = cause;
        partitions = null;
        recycleFilled();
        LOG.warn(
                "Lost the {} state changes buffered in this checkpoint interval while"
                        + " deduplicating them; the heap holds them all the same, so the"
                        + " checkpoint that takes them appends every live entry instead",
                records,
                cause);
    }

    /** Whether records were lost: the checkpoint must append all live entries instead. */
    public boolean lostRecords() {
        return lost != null;
    }

    /**
     * About how many distinct entries the records hold, without waiting for the background
     * thread: those it found in the records it sorted, and the rest at the same rate.
     */
    public long distinctEstimate() {
        int sorted = sortedRecords;
        int entries = sortedEntriesAtMost;
        long unsorted = Math.max(0, records - sorted);
        return sorted == 0 ? unsorted : entries + unsorted * Math.min(entries, sorted) / sorted;
    }

    /**
     * Distinct entries that the records hold at least, without waiting for the background thread:
     * those it has deduplicated so far.
     */
    public long distinctAtLeast() {
        return sortedEntriesAtLeast;
    }

    /**
     * How many distinct entries the records hold: sorts and deduplicates what the background
     * thread has not yet, on the calling thread. After the last record was handed over. None, if
     * records were lost.
     */
    public synchronized long distinctCount() {
        long[] count = {0};
        forEachPartition(partition -> count[0] += partition.countEntries());
        return lost == null ? count[0] : 0;
    }

    /**
     * Visits the latest record of every entry, partition by partition, chunk by chunk.
     *
     * @throws IOException if records were lost, now (a failure of the visitor too) or before
     */
    public synchronized void forEachLatest(RecordVisitor visitor) throws IOException {
        forEachPartition(partition -> partition.forEachLatest(visitor));
        if (lost != null) {
            throw new IOException(
                    "The state changes buffered in this checkpoint interval were lost while"
                            + " deduplicating them",
                    lost);
        }
    }

    /** Catches up, then visits the partitions, unless records were lost, now or before. */
    private void forEachPartition(Consumer<ChangePartition> action) {
        catchUp();
        if (lost != null || partitions == null) {
            return;
        }
        try {
            for (ChangePartition partition : partitions) {
                if (partition != null) {
                    action.accept(partition);
                }
            }
        } catch (Throwable t) {
            lose(t);
            ExceptionUtils.rethrowIfFatalError(t);
        }
    }

    /** Returns the chunks to the buffer for reuse and lets the partitions go; no reads after this. */
    public synchronized void recycle() {
        recycleFilled();
        if (partitions != null) {
            for (ChangePartition partition : partitions) {
                if (partition != null) {
                    partition.recycle();
                }
            }
            partitions = null;
        }
    }

    private void recycleFilled() {
        Chunk chunk;
        while ((chunk = filled.poll()) != null) {
            owner.recycle(chunk.bytes);
        }
    }

    // ------------------------------------------------------------------------
    //  record layout
    // ------------------------------------------------------------------------

    public static int keyGroup(byte[] record, int at) {
        return ((record[at] & 0xff) << 8) | (record[at + 1] & 0xff);
    }

    public static int stateId(byte[] record, int at) {
        return ((record[at + 2] & 0xff) << 8) | (record[at + 3] & 0xff);
    }

    public static int keyOffset(int at) {
        return at + HEADER_BYTES;
    }

    public static int keyLength(byte[] record, int at) {
        return readInt(record, at + 4);
    }

    /** The value's length, or -1 for a removal. */
    public static int valueLength(byte[] record, int at) {
        return readInt(record, keyOffset(at) + keyLength(record, at));
    }

    public static int valueOffset(byte[] record, int at) {
        return keyOffset(at) + keyLength(record, at) + 4;
    }

    static int recordLength(byte[] record, int at) {
        return valueOffset(record, at) - at + Math.max(0, valueLength(record, at));
    }

    /**
     * Where a record's identity starts: its state id, key and namespace length, and key and
     * namespace; two records are of the same entry if their identities are equal.
     */
    static int identityOffset(int at) {
        return at + 2;
    }

    static int identityLength(byte[] record, int at) {
        return HEADER_BYTES - 2 + keyLength(record, at);
    }

    /** The hash of a record's entry, as the log's index hashes it. */
    static int hash(byte[] record, int at) {
        return KeyBytes.hash(stateId(record, at), record, keyOffset(at), keyLength(record, at));
    }

    private static int readInt(byte[] b, int at) {
        return ((b[at] & 0xff) << 24)
                | ((b[at + 1] & 0xff) << 16)
                | ((b[at + 2] & 0xff) << 8)
                | (b[at + 3] & 0xff);
    }
}
