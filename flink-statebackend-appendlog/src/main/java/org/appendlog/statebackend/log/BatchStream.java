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

package org.appendlog.statebackend.log;

import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;

import java.io.IOException;
import java.io.OutputStream;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * One batch written while its records come, key group by key group in ascending order, through
 * buffers whose size does not depend on the batch's (batch format 4, see {@link BatchFormat}). A
 * key group's records gather in one block of {@code blockBytes} (more only for a record that is
 * larger by itself), which goes out behind its frame, compressed as {@link BatchCompression} says,
 * once full; the footer keeps 20 bytes per key group. Full batches and native savepoints are
 * written so: neither holds the state's serialized form on the heap, and a key group's records
 * may exceed what one array holds.
 */
public final class BatchStream implements RecordFormat.Target {

    /**
     * The raw bytes of records a block gathers before it goes out: the writer's buffers hold a
     * block (a quarter more, for the record that fills it) and its compressed copy, plus 20 bytes
     * per key group for the footer.
     */
    public static final int BLOCK_BYTES = 1 << 20;

    /** A block's frame: {@code rawLength:int storedLength:int}; {@code 0 0} ends a key group. */
    static final int FRAME_BYTES = 8;

    private final OutputStream out;
    private final String segment;
    private final long position;
    private final long checkpointId;
    private final KeyGroupRange range;
    private final BatchCompression compression;
    private final int blockBytes;
    private final DataOutputSerializer header;
    private DataOutputSerializer block;
    /** The frame and stored bytes of the block going out. */
    private byte[] stored = new byte[0];

    private final long[] offsets;
    private final long[] lengths;
    private final int[] crcs;
    private final CRC32C crc = new CRC32C();
    /** The key group being written, relative to the range's first. */
    private int current;
    /** Bytes written so far, from the batch's start. */
    private long written;

    private long recordCount;
    private long rawBody;

    /**
     * Writes the header of checkpoint {@code checkpointId}'s batch to {@code out}, whose current
     * position in segment {@code segment} is {@code position}.
     */
    public BatchStream(
            OutputStream out,
            String segment,
            long position,
            long checkpointId,
            KeyGroupRange range,
            List<String> stateNames,
            BatchCompression compression,
            int blockBytes)
            throws IOException {
        this.out = out;
        this.segment = segment;
        this.position = position;
        this.checkpointId = checkpointId;
        this.range = range;
        this.compression = compression;
        this.blockBytes = blockBytes;
        this.block = newBlock();
        int groups = range.getNumberOfKeyGroups();
        this.offsets = new long[groups];
        this.lengths = new long[groups];
        this.crcs = new int[groups];
        this.header = BatchFormat.streamedHeader(checkpointId, range, stateNames, compression);
        out.write(header.getSharedBuffer(), 0, header.length());
        written = header.length();
        offsets[0] = written;
    }

    /**
     * The block that a record of {@code keyGroup}, which {@link RecordFormat#write} appends, goes
     * to; key groups come in ascending order, and the records are this batch's checkpoint's. A
     * block that the last record filled goes out first.
     */
    @Override
    public DataOutputSerializer next(int keyGroup, long recordCheckpointId) throws IOException {
        if (recordCheckpointId != checkpointId) {
            throw new IllegalArgumentException(
                    "A record of checkpoint "
                            + recordCheckpointId
                            + " in the batch of checkpoint "
                            + checkpointId
                            + ": a streamed batch holds its own checkpoint's records only");
        }
        moveTo(keyGroup - range.getStartKeyGroup());
        if (block.length() >= blockBytes) {
            flushBlock();
        }
        recordCount++;
        return block;
    }

    public long recordCount() {
        return recordCount;
    }

    /** Ends the last key groups, writes the footer and returns where the batch landed. */
    public BatchLocation finish() throws IOException {
        moveTo(offsets.length - 1);
        endKeyGroup();
        DataOutputSerializer footer =
                new DataOutputSerializer(BatchFormat.streamedFooterLength(offsets.length));
        for (int i = 0; i < offsets.length; i++) {
            footer.writeLong(offsets[i]);
            footer.writeLong(lengths[i]);
            footer.writeInt(crcs[i]);
        }
        footer.writeLong(recordCount);
        footer.writeLong(rawBody);
        BatchFormat.writeFooter(out, header, footer);
        long storedBody = written - header.length();
        long length = written + footer.length();
        return new BatchLocation(
                segment,
                position,
                length,
                length - storedBody + rawBody,
                checkpointId,
                checkpointId,
                range);
    }

    private void moveTo(int keyGroup) throws IOException {
        if (keyGroup < current || keyGroup >= offsets.length) {
            throw new IllegalStateException(
                    "Key group "
                            + (range.getStartKeyGroup() + keyGroup)
                            + " out of order: the batch of "
                            + range
                            + " is at key group "
                            + (range.getStartKeyGroup() + current));
        }
        while (current < keyGroup) {
            endKeyGroup();
            current++;
            offsets[current] = written;
        }
    }

    /** Writes the current key group's last block and its end mark; its CRC starts over. */
    private void endKeyGroup() throws IOException {
        flushBlock();
        ensureStored(FRAME_BYTES);
        frame(0, 0);
        emit(FRAME_BYTES);
        lengths[current] = written - offsets[current];
        crcs[current] = (int) crc.getValue();
        crc.reset();
    }

    private void flushBlock() throws IOException {
        int raw = block.length();
        if (raw == 0) {
            return;
        }
        ensureStored(FRAME_BYTES + compression.maxBlockLength(raw));
        int storedLength =
                compression.encodeBlock(block.getSharedBuffer(), raw, stored, FRAME_BYTES);
        frame(raw, storedLength);
        emit(FRAME_BYTES + storedLength);
        rawBody += raw;
        if (block.getSharedBuffer().length > 2 * blockBytes) {
            // A record larger than a block grew it; the next blocks need no more than their size.
            block = newBlock();
            stored = new byte[0];
        } else {
            block.clear();
        }
    }

    /** Room for the record that fills a block, unless it is large by itself. */
    private DataOutputSerializer newBlock() {
        return new DataOutputSerializer(blockBytes + blockBytes / 4);
    }

    private void ensureStored(int bytes) {
        if (stored.length < bytes) {
            stored = new byte[bytes];
        }
    }

    private void frame(int rawLength, int storedLength) {
        writeInt(stored, 0, rawLength);
        writeInt(stored, 4, storedLength);
    }

    private void emit(int length) throws IOException {
        out.write(stored, 0, length);
        crc.update(stored, 0, length);
        written += length;
    }

    private static void writeInt(byte[] bytes, int at, int value) {
        bytes[at] = (byte) (value >>> 24);
        bytes[at + 1] = (byte) (value >>> 16);
        bytes[at + 2] = (byte) (value >>> 8);
        bytes[at + 3] = (byte) value;
    }
}
