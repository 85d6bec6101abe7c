package org.appendlog.statebackend.tracking;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.Queue;
import java.util.concurrent.ConcurrentLinkedQueue;

/**
 * The writes of states with immutable values since the last capture, serialized as they happen
 * into an append-only buffer (like the changelog backend's in-memory log): a write costs the task
 * thread a few sequential byte copies and keeps no object alive, and the barrier only swaps the
 * buffer. The asynchronous phase keeps the latest record of each entry ({@link BufferedChanges}),
 * so a key written a million times between two checkpoints is still one record in the log.
 *
 * <p>Records go to one of {@link #PARTITIONS} partitions by key group, so that each partition is
 * deduplicated with a table and records small enough for the processor's cache. Records are
 * {@code [key group: short][state: short][key and namespace length: int][key and namespace][value
 * length: int, -1 for a removal][value]} and never span chunks. Chunks come back
 * from the asynchronous phase for reuse, so they settle in the old generation instead of being
 * copied by every young collection. When the buffer outgrows {@code limitBytes} (a long checkpoint
 * interval), it is deduplicated in place.
 */
public final class ChangeBuffer {

    static final int CHUNK_BYTES = 1 << BufferedChanges.OFFSET_BITS;
    /** Key groups are spread over this many partitions (key group modulo), deduplicated apart. */
    static final int PARTITIONS = 16;
    private static final int MAX_POOLED = 256;

    private final Queue<byte[]> pool = new ConcurrentLinkedQueue<>();
    private final DataOutputSerializer scratch = new DataOutputSerializer(256);
    private final Partition[] partitions = new Partition[PARTITIONS];
    private long limitBytes;
    private int records;
    private long bytes;

    /** The records of the key groups of one partition, in chunks. */
    private final class Partition {
        List<byte[]> chunks = new ArrayList<>();
        List<Integer> used = new ArrayList<>();
        byte[] chunk;
        int position;

        void append(byte[] record, int offset, int length) {
            if (chunk == null || position + length > chunk.length) {
                close();
                if (chunks.size() + 1 >= BufferedChanges.MAX_CHUNKS) {
                    throw new IllegalStateException(
                            "The appendlog change buffer holds "
                                    + bytes
                                    + " bytes of distinct changes since the last checkpoint, its"
                                    + " maximum; checkpoint more often");
                }
                byte[] next = length > CHUNK_BYTES ? null : pool.poll();
                chunk = next != null ? next : new byte[Math.max(CHUNK_BYTES, length)];
                position = 0;
            }
            System.arraycopy(record, offset, chunk, position, length);
            position += length;
        }

        void close() {
            if (chunk != null && position > 0) {
                chunks.add(chunk);
                used.add(position);
            } else if (chunk != null) {
                recycle(chunk);
            }
            chunk = null;
        }
    }

    public ChangeBuffer(long limitBytes) {
        this.limitBytes = limitBytes;
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
        List<List<byte[]>> chunks = new ArrayList<>(PARTITIONS);
        List<List<Integer>> used = new ArrayList<>(PARTITIONS);
        for (Partition partition : partitions) {
            partition.close();
            chunks.add(partition.chunks);
            used.add(partition.used);
            partition.chunks = new ArrayList<>();
            partition.used = new ArrayList<>();
        }
        BufferedChanges drained = new BufferedChanges(chunks, used, records, this);
        records = 0;
        bytes = 0;
        return drained;
    }

    /** Keeps only the latest record of each entry; grows the limit if that did not halve it. */
    private void deduplicate() {
        BufferedChanges all = drain();
        all.forEachLatest(this::append);
        all.recycle();
        if (bytes > limitBytes / 2) {
            limitBytes *= 2;
        }
    }

    void recycle(byte[] spent) {
        if (spent.length == CHUNK_BYTES && pool.size() < MAX_POOLED) {
            pool.offer(spent);
        }
    }

    /** Records written since the last capture (before deduplication). */
    public int recordCount() {
        return records;
    }
}
