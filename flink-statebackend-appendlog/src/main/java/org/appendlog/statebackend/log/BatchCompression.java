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
 */
public enum BatchCompression implements DescribedEnum {
    NONE(0, "Key groups' records are stored as they are (batch format 2, which earlier versions read)."),
    LZ4(
            1,
            "Each key group's records are one LZ4 block (lz4-java, which Flink itself ships): a"
                    + " few percent of a core per checkpoint for several times fewer bytes written,"
                    + " kept and read on restore.");

    /** Longer key groups are stored raw: LZ4's bound for them would not fit an array. */
    private static final int MAX_COMPRESSIBLE = Integer.MAX_VALUE / 2;

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
