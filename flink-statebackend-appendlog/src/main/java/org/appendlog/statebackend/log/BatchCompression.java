package org.appendlog.statebackend.log;

import org.apache.flink.configuration.DescribedEnum;
import org.apache.flink.configuration.description.InlineElement;
import org.apache.flink.core.memory.DataOutputSerializer;

import net.jpountz.lz4.LZ4Compressor;
import net.jpountz.lz4.LZ4Exception;
import net.jpountz.lz4.LZ4Factory;
import net.jpountz.lz4.LZ4FastDecompressor;

import java.io.IOException;

import static org.apache.flink.configuration.description.TextElement.text;

/**
 * How the records of each key group of a batch are stored. Key groups are compressed one by one,
 * so that a restore or a compaction pass that reads only some of them decompresses only those.
 *
 * <pre>
 * LZ4 block := rawLength:int (lz4-block | raw bytes, if compressing saved nothing)
 * </pre>
 *
 * A block is stored raw exactly when it is 4 bytes longer than its raw length.
 */
public enum BatchCompression implements DescribedEnum {
    NONE(0, "Key groups' records are stored as they are."),
    LZ4(
            1,
            "Each key group's records are one LZ4 block (lz4-java, which Flink itself ships): a"
                    + " few percent of a core per checkpoint for several times fewer bytes written,"
                    + " kept and read on restore.");

    private static final LZ4Compressor COMPRESSOR = LZ4Factory.fastestInstance().fastCompressor();
    private static final LZ4FastDecompressor DECOMPRESSOR =
            LZ4Factory.fastestInstance().fastDecompressor();

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

    /** Appends {@code length} raw bytes of one key group as stored; returns the stored length. */
    int encode(byte[] raw, int offset, int length, DataOutputSerializer out) throws IOException {
        if (length == 0) {
            return 0;
        }
        if (this == NONE) {
            out.write(raw, offset, length);
            return length;
        }
        int start = out.length();
        out.writeInt(length);
        byte[] compressed = COMPRESSOR.compress(raw, offset, length);
        if (compressed.length < length) {
            out.write(compressed);
        } else {
            out.write(raw, offset, length);
        }
        return out.length() - start;
    }

    /**
     * The raw bytes of a key group stored as {@code bytes[offset, offset + length)} (already
     * checked against its CRC), at {@code fileOffset} of {@code file}.
     */
    Raw decode(byte[] bytes, int offset, int length, String file, long fileOffset)
            throws CorruptLogException {
        if (this == NONE || length == 0) {
            return new Raw(bytes, offset, length);
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
            return new Raw(bytes, offset + 4, rawLength);
        }
        if (rawLength <= 0 || rawLength < length - 4) {
            throw new CorruptLogException(
                    file, fileOffset, "LZ4 block gives an impossible length " + rawLength);
        }
        byte[] raw = new byte[rawLength];
        try {
            int read = DECOMPRESSOR.decompress(bytes, offset + 4, raw, 0, rawLength);
            if (read != length - 4) {
                throw new CorruptLogException(
                        file, fileOffset, "LZ4 block does not end where its key group does");
            }
        } catch (LZ4Exception e) {
            throw new CorruptLogException(file, fileOffset, "LZ4 block cannot be decompressed: " + e);
        }
        return new Raw(raw, 0, rawLength);
    }

    /** Raw records of one key group: a range of an array. */
    static final class Raw {
        final byte[] bytes;
        final int offset;
        final int length;

        Raw(byte[] bytes, int offset, int length) {
            this.bytes = bytes;
            this.offset = offset;
            this.length = length;
        }
    }

    @Override
    public InlineElement getDescription() {
        return text(description);
    }
}
