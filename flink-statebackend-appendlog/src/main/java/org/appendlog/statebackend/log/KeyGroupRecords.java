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

/**
 * The encoded records of one key group of one batch, {@code bytes[offset, offset + length)}, and
 * where they came from, so that an error about a record can name a place a hex dump finds: records
 * stored as they are have a file offset each; a decompressed record has its LZ4 block's file
 * offset (in a streamed key group: its first block's) and its position among the uncompressed
 * bytes.
 */
public final class KeyGroupRecords {

    public final byte[] bytes;
    public final int offset;
    public final int length;
    private final String file;
    /**
     * Records as stored: the file offset of {@code bytes[offset]}; else that of the LZ4 block or
     * of the streamed key group's first block.
     */
    private final long fileOffset;
    /** Null for records as stored; else what {@code fileOffset} points at, for error messages. */
    private final String decodedFrom;

    private KeyGroupRecords(
            byte[] bytes, int offset, int length, String file, long fileOffset, String decodedFrom) {
        this.bytes = bytes;
        this.offset = offset;
        this.length = length;
        this.file = file;
        this.fileOffset = fileOffset;
        this.decodedFrom = decodedFrom;
    }

    /** Records as they are stored, {@code bytes[offset]} at {@code fileOffset} of {@code file}. */
    public static KeyGroupRecords stored(
            byte[] bytes, int offset, int length, String file, long fileOffset) {
        return new KeyGroupRecords(bytes, offset, length, file, fileOffset, null);
    }

    /** Records decompressed from the LZ4 block at {@code blockOffset} of {@code file}. */
    static KeyGroupRecords decompressed(
            byte[] bytes, int offset, int length, String file, long blockOffset) {
        return new KeyGroupRecords(bytes, offset, length, file, blockOffset, "an LZ4 block");
    }

    /**
     * Records of a streamed key group (batch format 4) decoded from its blocks, the first at
     * {@code keyGroupOffset} of {@code file}.
     */
    static KeyGroupRecords fromBlocks(
            byte[] bytes, int offset, int length, String file, long keyGroupOffset) {
        return new KeyGroupRecords(
                bytes, offset, length, file, keyGroupOffset, "the key group's blocks");
    }

    public String file() {
        return file;
    }

    public int end() {
        return offset + length;
    }

    /** Where the record at {@code bytes[at]} is, as errors give it after the file's name. */
    public String positionOf(int at) {
        if (decodedFrom == null) {
            return "offset " + (fileOffset + at - offset);
        }
        return "offset "
                + fileOffset
                + " ("
                + decodedFrom
                + ": the record starts at byte "
                + (at - offset)
                + " of its "
                + length
                + " uncompressed bytes)";
    }
}
