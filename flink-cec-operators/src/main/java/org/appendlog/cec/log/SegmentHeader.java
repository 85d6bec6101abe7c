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

package org.appendlog.cec.log;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import javax.annotation.Nullable;

import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.IOException;
import java.io.UTFDataFormatException;
import java.util.zip.CRC32C;
import java.util.zip.CheckedInputStream;

/**
 * The header at the start of every segment file. Besides identifying the segment it names the
 * segment that precedes it in the stream and how many bytes of that predecessor are valid. This
 * back link is what makes one writer per file possible: after a restore the new attempt starts a
 * new segment whose back link stops at the checkpointed position, so the tail that the failed
 * attempt wrote after the checkpoint is left behind, never read, and never rewritten.
 *
 * <p>Layout: magic (int), header length (int), format version (int), subtask (int), sequence
 * number (long), predecessor valid length (long), predecessor name (UTF, empty for the first
 * segment), CRC32C of all that (int). The CRC guards the back link: a damaged valid length that
 * still ended on a record would drop the records after it without an error. Version 1 headers,
 * without the CRC, are still read.
 */
public final class SegmentHeader {

    static final int MAGIC = 0x4345434C; // "CECL"
    static final int VERSION = 2;
    /** The first version that ends with a CRC32C. */
    private static final int CHECKSUMMED = 2;
    /** The bytes of a version 1 header with an empty back link name. */
    private static final int FIXED_BYTES = 4 + 4 + 4 + 4 + 8 + 8 + 2;

    private final int subtask;
    private final long sequence;
    @Nullable private final LogPosition predecessorEnd;
    private final int length;

    SegmentHeader(int subtask, long sequence, @Nullable LogPosition predecessorEnd, int length) {
        this.subtask = subtask;
        this.sequence = sequence;
        this.predecessorEnd = predecessorEnd;
        this.length = length;
    }

    public int subtask() {
        return subtask;
    }

    public long sequence() {
        return sequence;
    }

    /** End of the valid part of the preceding segment, or null for the first segment. */
    @Nullable
    public LogPosition predecessorEnd() {
        return predecessorEnd;
    }

    /** Offset of the first record in the segment. */
    public int length() {
        return length;
    }

    static byte[] encode(int subtask, long sequence, @Nullable LogPosition predecessorEnd) throws IOException {
        ByteArrayOutputStream body = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(body);
        out.writeInt(VERSION);
        out.writeInt(subtask);
        out.writeLong(sequence);
        out.writeLong(predecessorEnd == null ? -1L : predecessorEnd.offset());
        out.writeUTF(predecessorEnd == null ? "" : predecessorEnd.segment());
        out.flush();
        ByteArrayOutputStream all = new ByteArrayOutputStream();
        DataOutputStream framed = new DataOutputStream(all);
        framed.writeInt(MAGIC);
        framed.writeInt(8 + body.size() + 4);
        body.writeTo(framed);
        framed.flush();
        CRC32C crc = new CRC32C();
        crc.update(all.toByteArray());
        framed.writeInt((int) crc.getValue());
        framed.flush();
        return all.toByteArray();
    }

    /**
     * Checks that {@code later}'s back link leads to a segment of a lower sequence number, as
     * rolls and restores write them: a damaged one must not close a loop.
     */
    static void checkBackLink(Path later, long laterSequence, Path segment, SegmentHeader header)
            throws CorruptCecLogException {
        if (header.sequence >= laterSequence) {
            throw new CorruptCecLogException(
                    later,
                    0,
                    "back link to " + segment + " (sequence " + header.sequence
                            + "), not before this segment's sequence " + laterSequence);
        }
    }

    /**
     * Reads and checks the header of {@code segment}: its length must be the bytes it takes, and
     * its back link a segment name of the same directory with a length past that segment's own
     * header.
     */
    public static SegmentHeader read(FileSystem fs, Path segment) throws IOException {
        try (FSDataInputStream raw = fs.open(segment)) {
            CRC32C crc = new CRC32C();
            DataInputStream in = new DataInputStream(new CheckedInputStream(raw, crc));
            int magic = in.readInt();
            if (magic != MAGIC) {
                throw new CorruptCecLogException(
                        segment, 0, String.format("not a CEC log segment (magic 0x%08X)", magic));
            }
            int length = in.readInt();
            int version = in.readInt();
            if (version < 1 || version > VERSION) {
                throw new CorruptCecLogException(
                        segment, 8, "format version " + version + ", this reader understands 1 to " + VERSION);
            }
            int subtask = in.readInt();
            long sequence = in.readLong();
            long predecessorLength = in.readLong();
            String predecessor = in.readUTF();
            long read = raw.getPos();
            if (version >= CHECKSUMMED) {
                int computed = (int) crc.getValue();
                if (new DataInputStream(raw).readInt() != computed) {
                    throw new CorruptCecLogException(segment, read, "CRC32C mismatch in the segment header");
                }
                read += 4;
            }
            if (length != read) {
                throw new CorruptCecLogException(
                        segment, 4, "header length " + length + ", the header takes " + read + " bytes");
            }
            if (!predecessor.isEmpty()
                    && (predecessor.contains("/") || predecessorLength < FIXED_BYTES)) {
                throw new CorruptCecLogException(
                        segment,
                        32,
                        "impossible back link to '" + predecessor + "' up to offset " + predecessorLength);
            }
            return new SegmentHeader(
                    subtask,
                    sequence,
                    predecessor.isEmpty() ? null : new LogPosition(predecessor, predecessorLength),
                    length);
        } catch (EOFException | UTFDataFormatException e) {
            throw new CorruptCecLogException(segment, 0, "header cut off or unreadable: " + e, e);
        }
    }
}
