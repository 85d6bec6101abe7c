package org.appendlog.statebackend.log;

/**
 * The encoded records of one key group of one batch, {@code bytes[offset, offset + length)}, and
 * where they came from, so that an error about a record can name a place a hex dump finds: records
 * stored as they are have a file offset each; a decompressed record has its LZ4 block's file
 * offset and its position among the block's uncompressed bytes.
 */
public final class KeyGroupRecords {

    public final byte[] bytes;
    public final int offset;
    public final int length;
    private final String file;
    /** Records as stored: the file offset of {@code bytes[offset]}; else the LZ4 block's. */
    private final long fileOffset;
    private final boolean decompressed;

    private KeyGroupRecords(
            byte[] bytes, int offset, int length, String file, long fileOffset, boolean decompressed) {
        this.bytes = bytes;
        this.offset = offset;
        this.length = length;
        this.file = file;
        this.fileOffset = fileOffset;
        this.decompressed = decompressed;
    }

    /** Records as they are stored, {@code bytes[offset]} at {@code fileOffset} of {@code file}. */
    public static KeyGroupRecords stored(
            byte[] bytes, int offset, int length, String file, long fileOffset) {
        return new KeyGroupRecords(bytes, offset, length, file, fileOffset, false);
    }

    /** Records decompressed from the LZ4 block at {@code blockOffset} of {@code file}. */
    static KeyGroupRecords decompressed(
            byte[] bytes, int offset, int length, String file, long blockOffset) {
        return new KeyGroupRecords(bytes, offset, length, file, blockOffset, true);
    }

    public String file() {
        return file;
    }

    public int end() {
        return offset + length;
    }

    /** Where the record at {@code bytes[at]} is, as errors give it after the file's name. */
    public String positionOf(int at) {
        if (!decompressed) {
            return "offset " + (fileOffset + at - offset);
        }
        return "offset "
                + fileOffset
                + " (an LZ4 block: the record starts at byte "
                + (at - offset)
                + " of its "
                + length
                + " uncompressed bytes)";
    }
}
