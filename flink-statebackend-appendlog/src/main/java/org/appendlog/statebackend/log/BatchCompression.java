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

import org.apache.flink.configuration.DescribedEnum;
import org.apache.flink.configuration.description.InlineElement;

import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;

import java.util.Arrays;

import static org.apache.flink.configuration.description.TextElement.text;

/**
 * How the records of each key group of a batch are stored. Key groups are compressed one by one,
 * so that a restore or a compaction pass that reads only some of them decompresses only those.
 *
 * <pre>
 * LZ4 block := rawLength:int (lz4-block | raw bytes, if compressing saved nothing)
 * </pre>
 *
 * A block is stored raw exactly when it is 4 bytes longer than its raw length. Batches stored
 * raw keep format version 2, so that a job can go back to an earlier version with {@link #NONE}.
 * Batches written as a stream ({@link BatchStream}: full batches, native savepoints) store each
 * key group as a chain of framed blocks of bounded size instead, with either compression.
 */
public enum BatchCompression implements DescribedEnum {
    NONE(
            0,
            "Key groups' records are stored as they are (incremental batches in batch format 2,"
                    + " which earlier versions read; full batches and savepoints in format 4)."),
    LZ4(
            1,
            "Each key group's records are one LZ4 block (lz4-java, which Flink itself ships), or"
                    + " in full batches and savepoints LZ4 blocks of at most 1 MiB of records each:"
                    + " a few percent of a core per checkpoint for several times fewer bytes"
                    + " written, kept and read on restore.");

    /** Longer key groups are stored raw: LZ4's bound for them would not fit an array. */
    private static final int MAX_COMPRESSIBLE = Integer.MAX_VALUE / 2;
    /** The longest array the JVM allocates. */
    static final int MAX_ARRAY = Integer.MAX_VALUE - 8;

    /**
     * LZ4's largest expansion: one byte of a block's length extension adds at most 255 bytes of
     * output, every other byte of a block less.
     */
    private static final int MAX_RATIO = 255;

    private final int id;
    private final String description;

    BatchCompression(int id, String description) {
        this.id = id;
        this.description = description;
    }

    /** The id that a batch header carries. */
    int id() {
        return id;
    }

    static BatchCompression ofId(int id, String file, long offset) throws CorruptLogException {
        for (BatchCompression compression : values()) {
            if (compression.id == id) {
                return compression;
            }
        }
        throw new CorruptLogException(file, offset, "unknown batch compression " + id);
    }

    /**
     * The most raw bytes that {@code stored} bytes of {@code blocks} blocks can hold: a raw length
     * above it is damage, found before anything is allocated for it.
     */
    static long maxRawLength(long stored, int blocks) {
        return stored <= Long.MAX_VALUE / MAX_RATIO ? stored * MAX_RATIO + blocks : Long.MAX_VALUE;
    }

    /**
     * The stored form of one key group's {@code length} raw bytes: LZ4's block, or the raw bytes
     * if compressing saves nothing, behind the raw length. Only for {@link #LZ4}.
     */
    byte[] encode(byte[] raw, int offset, int length) {
        byte[] block;
        int stored;
        if (length <= MAX_COMPRESSIBLE) {
            LZ4Compressor compressor = Lz4.FACTORY.fastCompressor();
            block = new byte[4 + compressor.maxCompressedLength(length)];
            stored = compressor.compress(raw, offset, length, block, 4, block.length - 4);
        } else {
            block = null;
            stored = length;
        }
        if (stored >= length) {
            block = new byte[4 + length];
            System.arraycopy(raw, offset, block, 4, length);
            stored = length;
        }
        block[0] = (byte) (length >>> 24);
        block[1] = (byte) (length >>> 16);
        block[2] = (byte) (length >>> 8);
        block[3] = (byte) length;
        return block.length == 4 + stored ? block : Arrays.copyOf(block, 4 + stored);
    }

    /** The most bytes {@link #encodeBlock} stores for {@code rawLength} raw bytes. */
    int maxBlockLength(int rawLength) {
        return this == NONE
                ? rawLength
                : Math.max(rawLength, Lz4.FACTORY.fastCompressor().maxCompressedLength(rawLength));
    }

    /**
     * Stores one block of a streamed key group (batch format 4): {@code raw[0, length)} into
     * {@code target} from {@code at}, compressed if that saves bytes (never for {@link #NONE}).
     * Returns the stored length, which equals {@code length} exactly when the block is stored raw.
     */
    int encodeBlock(byte[] raw, int length, byte[] target, int at) {
        if (this == LZ4) {
            int stored =
                    Lz4.FACTORY
                            .fastCompressor()
                            .compress(raw, 0, length, target, at, target.length - at);
            if (stored < length) {
                return stored;
            }
        }
        System.arraycopy(raw, 0, target, at, length);
        return length;
    }

    /**
     * The records of a streamed key group (batch format 4) stored as {@code bytes[offset, offset +
     * length)}, already checked against its CRC: its blocks, each {@code rawLength:int
     * storedLength:int} and the stored bytes, up to the {@code 0 0} that ends the key group.
     * Returns null if the key group has no records.
     */
    static KeyGroupRecords decodeBlocks(
            byte[] bytes, int offset, int length, String file, long fileOffset)
            throws CorruptLogException {
        int end = offset + length;
        long rawTotal = 0;
        int at = offset;
        // First pass: the frames, each checked against the extent, give the raw length.
        while (true) {
            if (end - at < BatchStream.FRAME_BYTES) {
                throw new CorruptLogException(
                        file, fileOffset + at - offset, "key group's blocks end without their end mark");
            }
            int raw = readInt(bytes, at);
            int stored = readInt(bytes, at + 4);
            if (raw == 0 && stored == 0) {
                if (at + BatchStream.FRAME_BYTES != end) {
                    throw new CorruptLogException(
                            file, fileOffset + at - offset, "bytes after the key group's end mark");
                }
                break;
            }
            if (raw <= 0
                    || stored <= 0
                    || stored > end - at - BatchStream.FRAME_BYTES
                    || raw < stored
                    || (raw > stored && raw / 255 > stored)) {
                throw new CorruptLogException(
                        file,
                        fileOffset + at - offset,
                        "block gives impossible lengths: " + stored + " stored, " + raw + " raw");
            }
            rawTotal += raw;
            at += BatchStream.FRAME_BYTES + stored;
        }
        if (rawTotal == 0) {
            return null;
        }
        if (rawTotal > MAX_ARRAY) {
            throw new CorruptLogException(
                    file,
                    fileOffset,
                    "key group holds "
                            + rawTotal
                            + " raw bytes of records, more than one array holds on the heap");
        }
        byte[] raw = new byte[(int) rawTotal];
        int filled = 0;
        for (at = offset; at + BatchStream.FRAME_BYTES < end; ) {
            int rawLength = readInt(bytes, at);
            int stored = readInt(bytes, at + 4);
            int from = at + BatchStream.FRAME_BYTES;
            if (stored == rawLength) {
                System.arraycopy(bytes, from, raw, filled, rawLength);
            } else {
                int decompressed;
                try {
                    decompressed =
                            Lz4.FACTORY
                                    .safeDecompressor()
                                    .decompress(bytes, from, stored, raw, filled, rawLength);
                } catch (LZ4Exception e) {
                    throw new CorruptLogException(
                            file,
                            fileOffset + at - offset,
                            "LZ4 block cannot be decompressed: " + e.getMessage());
                }
                if (decompressed != rawLength) {
                    throw new CorruptLogException(
                            file,
                            fileOffset + at - offset,
                            "LZ4 block holds " + decompressed + " bytes, its frame says " + rawLength);
                }
            }
            filled += rawLength;
            at = from + stored;
        }
        return KeyGroupRecords.fromBlocks(raw, 0, raw.length, file, fileOffset);
    }

    private static int readInt(byte[] bytes, int at) {
        return ((bytes[at] & 0xff) << 24)
                | ((bytes[at + 1] & 0xff) << 16)
                | ((bytes[at + 2] & 0xff) << 8)
                | (bytes[at + 3] & 0xff);
    }

    /**
     * The records of a key group stored as {@code bytes[offset, offset + length)} (already checked
     * against its CRC), at {@code fileOffset} of {@code file}.
     */
    KeyGroupRecords decode(byte[] bytes, int offset, int length, String file, long fileOffset)
            throws CorruptLogException {
        if (this == NONE || length == 0) {
            return KeyGroupRecords.stored(bytes, offset, length, file, fileOffset);
        }
        if (length < 4) {
            throw new CorruptLogException(file, fileOffset, "LZ4 block shorter than its header");
        }
        int rawLength =
                ((bytes[offset] & 0xff) << 24)
                        | ((bytes[offset + 1] & 0xff) << 16)
                        | ((bytes[offset + 2] & 0xff) << 8)
                        | (bytes[offset + 3] & 0xff);
        if (rawLength == length - 4) {
            return KeyGroupRecords.stored(bytes, offset + 4, rawLength, file, fileOffset + 4);
        }
        if (rawLength <= 0 || rawLength < length - 4 || rawLength > maxRawLength(length - 4, 1)) {
            throw new CorruptLogException(
                    file,
                    fileOffset,
                    "LZ4 block of "
                            + (length - 4)
                            + " bytes gives an impossible length "
                            + rawLength
                            + " (LZ4 expands at most "
                            + MAX_RATIO
                            + " times)");
        }
        byte[] raw = new byte[rawLength];
        int decompressed;
        try {
            // The safe decompressor checks the block's bounds, not only the output's.
            decompressed =
                    Lz4.FACTORY
                            .safeDecompressor()
                            .decompress(bytes, offset + 4, length - 4, raw, 0, rawLength);
        } catch (LZ4Exception e) {
            throw new CorruptLogException(
                    file, fileOffset, "LZ4 block cannot be decompressed: " + e.getMessage());
        }
        if (decompressed != rawLength) {
            throw new CorruptLogException(
                    file,
                    fileOffset,
                    "LZ4 block holds " + decompressed + " bytes, its header says " + rawLength);
        }
        return KeyGroupRecords.decompressed(raw, 0, rawLength, file, fileOffset);
    }

    /** Loaded on first use only: batches stored raw need no LZ4 on the class path. */
    private static final class Lz4 {
        static final LZ4Factory FACTORY = LZ4Factory.fastestInstance();
    }

    @Override
    public InlineElement getDescription() {
        return text(description);
    }
}
