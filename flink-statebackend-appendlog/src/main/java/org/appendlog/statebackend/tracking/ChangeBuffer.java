package org.appendlog.statebackend.tracking;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ArrayBlockingQueue;
import java.util.concurrent.Executor;

/**
 * The writes of states with immutable values since the last capture, serialized as they happen
 * into an append-only buffer (like the changelog backend's in-memory log): a write costs the task
 * thread a few sequential byte copies and keeps no object alive, and the barrier only swaps the
 * buffer. Only the latest record of each entry reaches the log ({@link ChangePartition}), so a key
 * written a million times between two checkpoints is still one record.
 *
 * <p>Records go to one of {@link #PARTITIONS} partitions by key group, so that each partition is
 * deduplicated with a table and records small enough for the processor's cache. Each chunk a
 * partition fills goes to {@code deduplicator}, a background thread, which puts its records into
 * the partition's table while the task goes on; the checkpoint is left with the last chunk of each
 * partition. Records are {@code [key group: short][state: short][key and namespace length:
 * int][key and namespace][value length: int, -1 for a removal][value]} and never span chunks.
 * Chunks and the partitions' tables come back from the asynchronous phase for reuse, so they
 * settle in the old generation instead of being copied by every young collection, and a table
 * does not grow again, doubling by doubling, in every interval. When the buffer outgrows {@code limitBytes}
 * (a long checkpoint interval), it is deduplicated in place.
 */
public final class ChangeBuffer {

    private static final Logger LOG = LoggerFactory.getLogger(ChangeBuffer.class);

    static final int CHUNK_BYTES = 1 << BufferedChanges.OFFSET_BITS;
    /** Key groups are spread over this many partitions (key group modulo), deduplicated apart. */
    static final int PARTITIONS = 64;
    /** Recycled chunks kept for reuse: 64 MB. */
    private static final int MAX_POOLED = 2048;

    private final Queue<byte[]> pool = new ArrayBlockingQueue<>(MAX_POOLED);
    /**
     * Emptied partitions whose tables the next interval reuses instead of growing new ones. Two
     * intervals' worth: when a barrier comes before the last checkpoint's asynchronous phase
     * handed its partitions back, the new interval grows a second set, and both are kept.
     */
    private final Queue<ChangePartition> spentPartitions = new ArrayBlockingQueue<>(2 * PARTITIONS);
    private final DataOutputSerializer scratch = new DataOutputSerializer(256);
    private final Executor deduplicator;
    private final Partition[] partitions = new Partition[PARTITIONS];
    private long limitBytes;
    private int records;
    private long bytes;

    /** The task thread's end of one partition: the chunk being filled. */
    private final class Partition {
        ChangePartition changes = emptyPartition();
        int chunks;
        byte[] chunk;
        int position;
        int chunkRecords;

        void append(byte[] record, int offset, int length) {
            if (chunk == null || position + length > chunk.length) {
                if (close()) {
                    deduplicator.execute(changes::catchUp);
                }
                if (chunks + 1 >= BufferedChanges.MAX_CHUNKS) {
                    throw new IllegalStateException(
                            "The appendlog change buffer holds "
                                    + bytes
                                    + " bytes of distinct changes since the last checkpoint, its"
                                    + " maximum; checkpoint more often");
                }
                byte[] next = length > CHUNK_BYTES ? null : pool.poll();
                chunk = next != null ? next : new byte[Math.max(CHUNK_BYTES, length)];
                position = 0;
                chunkRecords = 0;
            }
            System.arraycopy(record, offset, chunk, position, length);
            position += length;
            chunkRecords++;
        }

        /** Hands the current chunk over, if it holds records; returns whether it did. */
        boolean close() {
            boolean handed = false;
            if (chunk != null && position > 0) {
                changes.add(chunk, position, chunkRecords);
                chunks++;
                handed = true;
            } else if (chunk != null) {
                recycle(chunk);
            }
            chunk = null;
            return handed;
        }

        ChangePartition drain() {
            close();
            ChangePartition drained = changes;
            changes = emptyPartition();
            chunks = 0;
            return drained;
        }
    }

    /**
     * @param deduplicator runs the deduplication of filled chunks, off the task thread
     */
    public ChangeBuffer(long limitBytes, Executor deduplicator) {
        this.limitBytes = limitBytes;
        this.deduplicator = deduplicator;
        for (int i = 0; i < PARTITIONS; i++) {
            partitions[i] = new Partition();
        }
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
        scratch.clear();
        scratch.writeShort(keyGroup);
        scratch.writeShort(stateId);
        scratch.writeInt(0);
        keySerializer.serialize(key, scratch);
        namespaceSerializer.serialize(namespace, scratch);
        int valueAt = scratch.length();
        scratch.writeIntUnsafe(valueAt - BufferedChanges.HEADER_BYTES, 4);
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

    /** Copies one encoded record into its key group's partition. */
    void append(byte[] record, int offset, int length) {
        partitions[BufferedChanges.keyGroup(record, offset) % PARTITIONS].append(record, offset, length);
        records++;
        bytes += length;
    }

    /** Hands over the records written so far and starts an empty buffer. */
    public BufferedChanges drain() {
        List<ChangePartition> drained = new ArrayList<>(PARTITIONS);
        for (Partition partition : partitions) {
            drained.add(partition.drain());
        }
        BufferedChanges changes = new BufferedChanges(drained, records, this);
        records = 0;
        bytes = 0;
        return changes;
    }

    /** Keeps only the latest record of each entry; grows the limit if that did not halve it. */
    private void deduplicate() {
        long before = bytes;
        long start = System.nanoTime();
        BufferedChanges all = drain();
        all.forEachLatest(this::append);
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

    private ChangePartition emptyPartition() {
        ChangePartition spent = spentPartitions.poll();
        return spent != null ? spent : new ChangePartition();
    }

    /** An emptied partition, for a later interval; dropped if enough are kept already. */
    void reuse(ChangePartition emptied) {
        spentPartitions.offer(emptied);
    }

    void recycle(byte[] spent) {
        if (spent.length == CHUNK_BYTES) {
            pool.offer(spent); // dropped if the pool is full
        }
    }

    /** Records written since the last capture (before deduplication). */
    public int recordCount() {
        return records;
    }
}
