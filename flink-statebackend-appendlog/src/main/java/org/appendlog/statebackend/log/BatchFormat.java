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

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;

import java.io.IOException;
import java.io.OutputStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * The on-disk layout of segments and batches.
 *
 * <pre>
 * segment := SEGMENT_MAGIC:int FORMAT_VERSION:int batch*
 * batch   := header stored-records-of-kg* footer
 * header  := BATCH_MAGIC:int version:byte checkpointId:long minCheckpointId:long
 *            firstKg:int lastKg:int
 *            recordCount:long stateCount:int stateName:utf*
 *            compression:byte storedBodyLength:long rawBodyLength:long      (version 3 only)
 * footer  := (offset:long length:int crc32c:int) per key group, of the stored bytes, offsets
 *            relative to the batch
 *            headerLength:int crc32c(header + footer so far):int FOOTER_MAGIC:int
 *
 * streamed batch (version 4) := header4 (block* 0:int 0:int)-per-key-group footer4
 * header4 := BATCH_MAGIC:int 4:byte checkpointId:long minCheckpointId:long firstKg:int lastKg:int
 *            stateCount:int stateName:utf* compression:byte
 * block   := rawLength:int storedLength:int stored    (stored raw exactly when the lengths match)
 * footer4 := (offset:long length:long crc32c:int) per key group
 *            recordCount:long rawBodyLength:long
 *            headerLength:int crc32c(header + footer so far):int FOOTER_MAGIC:int
 * </pre>
 *
 * <p>Each key group carries its own CRC32C so that a restore which reads only the key groups it
 * owns can still verify every byte it reads; the header and footer have one of their own. Each
 * key group's records are stored as {@link BatchCompression} says (version 2 batches: raw), and
 * the header gives the body's stored and raw lengths, so that a reader without a manifest finds
 * the batch's end, and the index counts raw bytes as its records do.
 *
 * <p>Version 4 is written by {@link BatchStream} while the records come (full batches, native
 * savepoints): what is known only at the end (the record count, the lengths) is in the footer,
 * and each key group is a chain of bounded blocks, so a reader without a manifest steps over the
 * frames to find the batch's end.
 *
 * <p>Lengths and counts are read before the CRC that covers them can be checked, so each is
 * bounded first: key groups below Flink's largest max parallelism, raw lengths by LZ4's largest
 * expansion of the stored ones, key groups one after another inside their batch, a batch inside
 * its segment. Damage then fails with a {@link CorruptLogException} naming file and offset, never
 * with an allocation of what a damaged length says.
 */
public final class BatchFormat {

    public static final int SEGMENT_MAGIC = 0x414C5347; // "ALSG"
    /**
     * 2: records with variable-length integers ({@link RecordFormat}); still written for batches
     * stored raw. 3: key groups stored as the header's {@link BatchCompression} says. Both are
     * read.
     */
    public static final int FORMAT_VERSION = 3;

    private static final int UNCOMPRESSED_VERSION = 2;
    /** Batches written by {@link BatchStream}. */
    private static final int STREAMED_VERSION = 4;
    public static final int SEGMENT_HEADER_BYTES = 8;
    private static final int BATCH_MAGIC = 0x414C4F47; // "ALOG"
    private static final int FOOTER_MAGIC = 0x414C4654; // "ALFT"
    private static final int FOOTER_ENTRY_BYTES = 16;
    private static final int STREAMED_FOOTER_ENTRY_BYTES = 20;
    /** Version 4's record count and raw body length, ahead of the common tail. */
    private static final int STREAMED_FOOTER_SUMMARY_BYTES = 16;
    private static final int FOOTER_TAIL_BYTES = 12;
    /** Key groups are numbered below Flink's largest max parallelism. */
    private static final int KEY_GROUP_LIMIT = KeyGroupRangeAssignment.UPPER_BOUND_MAX_PARALLELISM;
    /**
     * A read of a length not yet covered by a CRC allocates at most this much ahead of the bytes
     * it got: a damaged length then fails at the end of the file, not in the allocation.
     */
    private static final int UNVERIFIED_READ_STEP = 1 << 20;

    private BatchFormat() {}

    /** Whether a segment whose header gives {@code version} holds batches this class reads. */
    public static boolean isReadableVersion(int version) {
        return version == UNCOMPRESSED_VERSION || version == FORMAT_VERSION;
    }

    public static byte[] segmentHeader() {
        DataOutputSerializer out = new DataOutputSerializer(SEGMENT_HEADER_BYTES);
        try {
            out.writeInt(SEGMENT_MAGIC);
            out.writeInt(FORMAT_VERSION);
        } catch (IOException e) {
            throw new IllegalStateException(e);
        }
        return out.getCopyOfBuffer();
    }

    /**
     * Writes {@code batch} to {@code out}, whose current position in segment {@code segment} is
     * {@code position}, with its key groups stored as {@code compression} says (stored raw: as
     * format version 2). Returns where the batch landed.
     */
    public static BatchLocation write(
            OutputStream out,
            String segment,
            long position,
            BatchBuilder batch,
            BatchCompression compression)
            throws IOException {
        KeyGroupRange range = batch.keyGroups();
        int groups = range.getNumberOfKeyGroups();
        long rawBody = 0;
        for (int kg = range.getStartKeyGroup(); kg <= range.getEndKeyGroup(); kg++) {
            rawBody += rawLength(batch, kg);
        }
        // Compressed key groups are encoded first, one array each: the header gives the body's
        // stored length.
        byte[][] encoded = null;
        long storedBody = rawBody;
        if (compression != BatchCompression.NONE) {
            encoded = new byte[groups][];
            storedBody = 0;
            for (int kg = range.getStartKeyGroup(); kg <= range.getEndKeyGroup(); kg++) {
                DataOutputSerializer data = batch.keyGroupData(kg);
                if (data != null && data.length() > 0) {
                    byte[] block = compression.encode(data.getSharedBuffer(), 0, data.length());
                    encoded[kg - range.getStartKeyGroup()] = block;
                    storedBody += block.length;
                }
            }
        }

        DataOutputSerializer header = new DataOutputSerializer(128);
        header.writeInt(BATCH_MAGIC);
        header.writeByte(encoded == null ? UNCOMPRESSED_VERSION : FORMAT_VERSION);
        header.writeLong(batch.checkpointId());
        header.writeLong(batch.minCheckpointId());
        header.writeInt(range.getStartKeyGroup());
        header.writeInt(range.getEndKeyGroup());
        header.writeLong(batch.recordCount());
        header.writeInt(batch.stateNames().size());
        for (String name : batch.stateNames()) {
            header.writeUTF(name);
        }
        if (encoded != null) {
            header.writeByte(compression.id());
            header.writeLong(storedBody);
            header.writeLong(rawBody);
        }
        out.write(header.getSharedBuffer(), 0, header.length());

        DataOutputSerializer footer =
                new DataOutputSerializer(groups * FOOTER_ENTRY_BYTES + FOOTER_TAIL_BYTES);
        long relative = header.length();
        CRC32C crc = new CRC32C();
        for (int kg = range.getStartKeyGroup(); kg <= range.getEndKeyGroup(); kg++) {
            byte[] bytes;
            int length;
            if (encoded == null) {
                DataOutputSerializer data = batch.keyGroupData(kg);
                bytes = data == null ? null : data.getSharedBuffer();
                length = rawLength(batch, kg);
            } else {
                bytes = encoded[kg - range.getStartKeyGroup()];
                length = bytes == null ? 0 : bytes.length;
            }
            crc.reset();
            if (length > 0) {
                out.write(bytes, 0, length);
                crc.update(bytes, 0, length);
            }
            footer.writeLong(relative);
            footer.writeInt(length);
            footer.writeInt((int) crc.getValue());
            relative += length;
        }
        writeFooter(out, header, footer);
        long length = relative + footer.length();
        return new BatchLocation(
                segment,
                position,
                length,
                length - storedBody + rawBody,
                batch.checkpointId(),
                batch.minCheckpointId(),
                range);
    }

    /**
     * Ends {@code footer} (the header's length, a CRC32C over header and footer, the magic) and
     * writes it to {@code out}.
     */
    static void writeFooter(
            OutputStream out, DataOutputSerializer header, DataOutputSerializer footer)
            throws IOException {
        footer.writeInt(header.length());
        CRC32C crc = new CRC32C();
        crc.update(header.getSharedBuffer(), 0, header.length());
        crc.update(footer.getSharedBuffer(), 0, footer.length());
        footer.writeInt((int) crc.getValue());
        footer.writeInt(FOOTER_MAGIC);
        out.write(footer.getSharedBuffer(), 0, footer.length());
    }

    /** The header of a streamed batch (version 4), all of it known before the first record. */
    static DataOutputSerializer streamedHeader(
            long checkpointId,
            KeyGroupRange range,
            List<String> stateNames,
            BatchCompression compression)
            throws IOException {
        DataOutputSerializer header = new DataOutputSerializer(128);
        header.writeInt(BATCH_MAGIC);
        header.writeByte(STREAMED_VERSION);
        header.writeLong(checkpointId);
        header.writeLong(checkpointId);
        header.writeInt(range.getStartKeyGroup());
        header.writeInt(range.getEndKeyGroup());
        header.writeInt(stateNames.size());
        for (String name : stateNames) {
            header.writeUTF(name);
        }
        header.writeByte(compression.id());
        return header;
    }

    /** The footer's length of a batch of {@code groups} key groups, by format version. */
    static int footerLength(int version, int groups) {
        return version == STREAMED_VERSION
                ? streamedFooterLength(groups)
                : groups * FOOTER_ENTRY_BYTES + FOOTER_TAIL_BYTES;
    }

    static int streamedFooterLength(int groups) {
        return groups * STREAMED_FOOTER_ENTRY_BYTES
                + STREAMED_FOOTER_SUMMARY_BYTES
                + FOOTER_TAIL_BYTES;
    }

    private static int rawLength(BatchBuilder batch, int kg) {
        DataOutputSerializer data = batch.keyGroupData(kg);
        return data == null ? 0 : data.length();
    }

    /** The verified header and footer of one batch: what a reader needs to find key groups. */
    public static final class BatchIndex {
        public final BatchLocation location;
        public final List<String> stateNames;
        public final long recordCount;
        private final BatchCompression compression;
        private final boolean streamed;
        private final long[] offsets;
        private final long[] lengths;
        private final int[] crcs;

        private BatchIndex(
                BatchLocation location,
                List<String> stateNames,
                long recordCount,
                BatchCompression compression,
                boolean streamed,
                long[] offsets,
                long[] lengths,
                int[] crcs) {
            this.location = location;
            this.stateNames = stateNames;
            this.recordCount = recordCount;
            this.compression = compression;
            this.streamed = streamed;
            this.offsets = offsets;
            this.lengths = lengths;
            this.crcs = crcs;
        }

        /** The stored (on disk) length of key group {@code kg}'s records. */
        public long keyGroupLength(int kg) {
            return lengths[kg - location.keyGroups().getStartKeyGroup()];
        }
    }

    /**
     * Finds the extent of the batch starting at {@code offset} of a segment of {@code
     * segmentLength} bytes without a manifest, by reading its header and stepping over its
     * records (the header counts them, each is length-prefixed) or, in version 4, its blocks. A
     * batch that would end past the segment's end fails. The result is then checked with {@link
     * #readIndex} and {@link #readKeyGroups}.
     */
    public static BatchLocation locate(
            FSDataInputStream in, String file, String segment, long offset, long segmentLength)
            throws IOException {
        in.seek(offset);
        java.io.DataInputStream data = new java.io.DataInputStream(in);
        try {
            if (data.readInt() != BATCH_MAGIC) {
                throw new CorruptLogException(file, offset, "no batch header");
            }
            int version = data.readByte();
            long checkpointId = data.readLong();
            long minCheckpointId = data.readLong();
            KeyGroupRange range = keyGroups(data.readInt(), data.readInt(), file, offset + 21);
            long records = version == STREAMED_VERSION ? 0 : data.readLong();
            int states = data.readInt();
            if (records < 0 || states < 0) {
                throw new CorruptLogException(
                        file,
                        offset + 29,
                        "batch header counts " + records + " records of " + states + " states");
            }
            for (int i = 0; i < states; i++) {
                data.readUTF();
            }
            long headerEnd;
            long storedBody;
            long rawBody;
            if (version == STREAMED_VERSION) {
                BatchCompression.ofId(data.readByte(), file, offset);
                headerEnd = in.getPos();
                rawBody = skipStreamedKeyGroups(in, data, file, range, segmentLength);
                storedBody = in.getPos() - headerEnd;
            } else if (version == UNCOMPRESSED_VERSION) {
                headerEnd = in.getPos();
                for (long r = 0; r < records; r++) {
                    RecordFormat.skip(data);
                }
                storedBody = in.getPos() - headerEnd;
                rawBody = storedBody;
            } else if (version == FORMAT_VERSION) {
                BatchCompression.ofId(data.readByte(), file, offset);
                storedBody = data.readLong();
                rawBody = data.readLong();
                headerEnd = in.getPos();
                // Not yet checked against the CRC, which needs the footer these lengths find.
                if (storedBody < 0
                        || storedBody > segmentLength
                        || rawBody < storedBody - 4L * range.getNumberOfKeyGroups()
                        || rawBody > BatchCompression.maxRawLength(storedBody, range.getNumberOfKeyGroups())) {
                    throw new CorruptLogException(
                            file,
                            offset,
                            "batch header gives impossible lengths: "
                                    + storedBody
                                    + " bytes stored, "
                                    + rawBody
                                    + " raw");
                }
            } else {
                throw new CorruptLogException(
                        file, offset + 4, "unsupported batch format version " + version);
            }
            long length =
                    headerEnd
                            - offset
                            + storedBody
                            + footerLength(version, range.getNumberOfKeyGroups());
            if (offset + length > segmentLength) {
                throw new CorruptLogException(
                        file,
                        offset,
                        "batch of "
                                + length
                                + " bytes is cut off by the end of the segment ("
                                + segmentLength
                                + " bytes): torn, truncated, or a damaged length");
            }
            return new BatchLocation(
                    segment,
                    offset,
                    length,
                    length - storedBody + rawBody,
                    checkpointId,
                    minCheckpointId,
                    range);
        } catch (java.io.EOFException e) {
            throw new CorruptLogException(file, offset, "batch is cut off (torn or truncated)");
        }
    }

    /**
     * Steps over the blocks of every key group of a streamed batch, checking each frame against
     * LZ4's largest expansion and the segment's end; returns the raw bytes they hold.
     */
    private static long skipStreamedKeyGroups(
            FSDataInputStream in,
            java.io.DataInputStream data,
            String file,
            KeyGroupRange range,
            long segmentLength)
            throws IOException {
        long rawBody = 0;
        for (int kg = range.getStartKeyGroup(); kg <= range.getEndKeyGroup(); kg++) {
            while (true) {
                long at = in.getPos();
                int raw = data.readInt();
                int stored = data.readInt();
                if (raw == 0 && stored == 0) {
                    break;
                }
                long next = at + BatchStream.FRAME_BYTES + (long) stored;
                if (raw <= 0
                        || stored <= 0
                        || raw < stored
                        || raw > BatchCompression.maxRawLength(stored, 1)
                        || next > segmentLength) {
                    throw new CorruptLogException(
                            file,
                            at,
                            "block of key group "
                                    + kg
                                    + " gives impossible lengths: "
                                    + stored
                                    + " stored, "
                                    + raw
                                    + " raw");
                }
                in.seek(next);
                rawBody += raw;
            }
        }
        return rawBody;
    }

    /** Reads and checks a batch's header and footer. */
    public static BatchIndex readIndex(FSDataInputStream in, String file, BatchLocation loc)
            throws IOException {
        KeyGroupRange range = loc.keyGroups();
        int groups = range.getNumberOfKeyGroups();
        if (loc.offset() < SEGMENT_HEADER_BYTES
                || loc.length() < 5
                || loc.length() > Long.MAX_VALUE - loc.offset()) {
            throw new CorruptLogException(
                    file, loc.offset(), "impossible batch extent of " + loc.length() + " bytes");
        }
        // The version says how long the footer is; the CRC covers it below.
        boolean streamed = readAt(in, file, loc.offset(), 5)[4] == STREAMED_VERSION;
        int footerLength = footerLength(streamed ? STREAMED_VERSION : FORMAT_VERSION, groups);
        if (loc.length() < footerLength + 1) {
            throw new CorruptLogException(
                    file,
                    loc.offset(),
                    "batch of " + loc.length() + " bytes cannot hold its footer of " + footerLength);
        }
        long footerStart = loc.offset() + loc.length() - footerLength;
        byte[] footer = readAt(in, file, footerStart, footerLength);
        DataInputDeserializer f = new DataInputDeserializer(footer);
        long[] offsets = new long[groups];
        long[] lengths = new long[groups];
        int[] crcs = new int[groups];
        for (int i = 0; i < groups; i++) {
            offsets[i] = f.readLong();
            lengths[i] = streamed ? f.readLong() : f.readInt();
            crcs[i] = f.readInt();
        }
        long streamedRecords = streamed ? f.readLong() : 0;
        long streamedRawBody = streamed ? f.readLong() : 0;
        int headerLength = f.readInt();
        int storedCrc = f.readInt();
        if (f.readInt() != FOOTER_MAGIC) {
            throw new CorruptLogException(
                    file, footerStart + footerLength - 4, "no batch footer (torn or truncated batch)");
        }
        if (headerLength <= 0 || headerLength > loc.length() - footerLength) {
            throw new CorruptLogException(
                    file, footerStart, "footer gives an impossible header length " + headerLength);
        }
        byte[] header = readUnverified(in, file, loc.offset(), headerLength);
        CRC32C crc = new CRC32C();
        crc.update(header);
        crc.update(footer, 0, footerLength - 8);
        if ((int) crc.getValue() != storedCrc) {
            throw new CorruptLogException(
                    file, loc.offset(), "CRC32C mismatch in batch header or footer");
        }
        DataInputDeserializer h = new DataInputDeserializer(header);
        if (h.readInt() != BATCH_MAGIC) {
            throw new CorruptLogException(file, loc.offset(), "no batch header");
        }
        int version = h.readByte();
        if (version != FORMAT_VERSION
                && version != UNCOMPRESSED_VERSION
                && version != STREAMED_VERSION) {
            throw new CorruptLogException(
                    file, loc.offset() + 4, "unsupported batch format version " + version);
        }
        long checkpointId = h.readLong();
        long minCheckpointId = h.readLong();
        if (checkpointId != loc.checkpointId() || minCheckpointId != loc.minCheckpointId()) {
            // A self-consistent batch of another checkpoint, e.g. a segment copied over another.
            throw new CorruptLogException(
                    file,
                    loc.offset(),
                    "batch was written by checkpoint "
                            + checkpointId
                            + " (oldest record "
                            + minCheckpointId
                            + "), the checkpoint expects "
                            + loc.checkpointId()
                            + " (oldest record "
                            + loc.minCheckpointId()
                            + "); is this file a copy of another segment?");
        }
        KeyGroupRange written = keyGroups(h.readInt(), h.readInt(), file, loc.offset() + 21);
        if (!written.equals(range)) {
            throw new CorruptLogException(
                    file,
                    loc.offset(),
                    "batch holds key groups " + written + ", the checkpoint expects " + range);
        }
        long recordCount = streamed ? streamedRecords : h.readLong();
        int stateCount = h.readInt();
        if (recordCount < 0 || stateCount < 0 || stateCount > h.available() / 2) {
            throw new CorruptLogException(
                    file,
                    loc.offset() + 29,
                    "batch counts " + recordCount + " records of " + stateCount + " states");
        }
        List<String> names = new ArrayList<>(stateCount);
        for (int i = 0; i < stateCount; i++) {
            names.add(h.readUTF());
        }
        BatchCompression compression = BatchCompression.NONE;
        long storedBody = loc.length() - headerLength - footerLength;
        long rawBody = storedBody;
        if (streamed) {
            compression = BatchCompression.ofId(h.readByte(), file, loc.offset());
            rawBody = streamedRawBody;
            if (rawBody < 0) {
                throw new CorruptLogException(
                        file, footerStart, "batch footer gives " + rawBody + " raw bytes");
            }
        } else if (version == FORMAT_VERSION) {
            compression = BatchCompression.ofId(h.readByte(), file, loc.offset());
            long headerStored = h.readLong();
            rawBody = h.readLong();
            if (headerStored != storedBody
                    || rawBody < 0
                    || rawBody > BatchCompression.maxRawLength(storedBody, groups)) {
                throw new CorruptLogException(
                        file,
                        loc.offset(),
                        "batch header gives "
                                + headerStored
                                + " bytes of records ("
                                + rawBody
                                + " raw), its footer and length leave "
                                + storedBody);
            }
        }
        checkKeyGroupExtents(
                file,
                footerStart,
                streamed ? STREAMED_FOOTER_ENTRY_BYTES : FOOTER_ENTRY_BYTES,
                headerLength,
                storedBody,
                offsets,
                lengths);
        BatchLocation verified =
                new BatchLocation(
                        loc.segment(),
                        loc.offset(),
                        loc.length(),
                        loc.length() - storedBody + rawBody,
                        checkpointId,
                        minCheckpointId,
                        range);
        return new BatchIndex(
                verified, names, recordCount, compression, streamed, offsets, lengths, crcs);
    }

    /**
     * Checks that the footer's key groups lie one after another from the header's end to the
     * footer, as they are written: every later read of a key group stays inside its batch.
     */
    private static void checkKeyGroupExtents(
            String file,
            long footerStart,
            int entryBytes,
            int headerLength,
            long storedBody,
            long[] offsets,
            long[] lengths)
            throws CorruptLogException {
        long expected = headerLength;
        for (int i = 0; i < offsets.length; i++) {
            if (offsets[i] != expected || lengths[i] < 0 || lengths[i] > storedBody) {
                throw new CorruptLogException(
                        file,
                        footerStart + (long) i * entryBytes,
                        "footer places key group #"
                                + i
                                + " at "
                                + offsets[i]
                                + " (+"
                                + lengths[i]
                                + " bytes), where the one before ends at "
                                + expected);
            }
            expected += lengths[i];
        }
        if (expected != headerLength + storedBody) {
            throw new CorruptLogException(
                    file,
                    footerStart,
                    "footer's key groups end at "
                            + expected
                            + ", the footer starts at "
                            + (headerLength + storedBody));
        }
    }

    /** The key groups {@code first..last} as a header or manifest at {@code offset} gives them. */
    static KeyGroupRange keyGroups(int first, int last, String file, long offset)
            throws CorruptLogException {
        if (first < 0 || first > last || last >= KEY_GROUP_LIMIT) {
            throw new CorruptLogException(
                    file,
                    offset,
                    "impossible key groups "
                            + first
                            + ".."
                            + last
                            + " (key groups are 0 to "
                            + (KEY_GROUP_LIMIT - 1)
                            + ")");
        }
        return KeyGroupRange.of(first, last);
    }

    /**
     * Reads the records of key groups {@code first..last} (within the batch's range) in one
     * sequential read, checks each group's CRC, and hands each group's bytes to {@code consumer}.
     * A range larger than one array is read in halves; a single key group larger than that fails.
     */
    public static void readKeyGroups(
            FSDataInputStream in,
            String file,
            BatchIndex index,
            int first,
            int last,
            KeyGroupConsumer consumer)
            throws IOException {
        KeyGroupRange range = index.location.keyGroups();
        if (first > last || !range.contains(first) || !range.contains(last)) {
            throw new IllegalArgumentException(
                    "key groups " + first + ".." + last + " are not all in the batch's " + range);
        }
        int base = range.getStartKeyGroup();
        long start = index.offsets[first - base];
        long end = index.offsets[last - base] + index.lengths[last - base];
        if (end == start) {
            return;
        }
        if (end - start > BatchCompression.MAX_ARRAY && first < last) {
            int middle = first + (last - first) / 2;
            readKeyGroups(in, file, index, first, middle, consumer);
            readKeyGroups(in, file, index, middle + 1, last, consumer);
            return;
        }
        long absolute = index.location.offset() + start;
        if (end - start > BatchCompression.MAX_ARRAY) {
            throw new IOException(
                    "key group "
                            + first
                            + " of the batch at offset "
                            + index.location.offset()
                            + " of "
                            + file
                            + " stores "
                            + (end - start)
                            + " bytes, more than one array holds on the heap");
        }
        byte[] bytes = readAt(in, file, absolute, (int) (end - start));
        CRC32C crc = new CRC32C();
        for (int kg = first; kg <= last; kg++) {
            int i = kg - base;
            int from = (int) (index.offsets[i] - start);
            int length = (int) index.lengths[i];
            crc.reset();
            crc.update(bytes, from, length);
            if ((int) crc.getValue() != index.crcs[i]) {
                throw new CorruptLogException(
                        file, absolute + from, "CRC32C mismatch in the records of key group " + kg);
            }
            KeyGroupRecords records = null;
            if (index.streamed) {
                records =
                        BatchCompression.decodeBlocks(
                                bytes, from, length, file, absolute + from);
            } else if (length > 0) {
                records = index.compression.decode(bytes, from, length, file, absolute + from);
            }
            if (records != null) {
                consumer.accept(kg, records);
            }
        }
    }

    /** Receives the verified, uncompressed records of one key group. */
    @FunctionalInterface
    public interface KeyGroupConsumer {
        void accept(int keyGroup, KeyGroupRecords records) throws IOException;
    }


    private static byte[] readAt(FSDataInputStream in, String file, long position, int length)
            throws IOException {
        in.seek(position);
        byte[] buffer = new byte[length];
        readFully(in, file, position, buffer, 0, length);
        return buffer;
    }

    /**
     * Like {@link #readAt}, for a length no CRC covered yet: the buffer grows with the bytes that
     * are there, so that a damaged length fails at the file's end instead of allocating it.
     */
    private static byte[] readUnverified(
            FSDataInputStream in, String file, long position, int length) throws IOException {
        in.seek(position);
        byte[] buffer = new byte[Math.min(length, UNVERIFIED_READ_STEP)];
        int read = 0;
        while (read < length) {
            if (read == buffer.length) {
                buffer = Arrays.copyOf(buffer, (int) Math.min(length, 2L * buffer.length));
            }
            int chunk = buffer.length - read;
            readFully(in, file, position, buffer, read, chunk);
            read += chunk;
        }
        return buffer;
    }

    private static void readFully(
            FSDataInputStream in, String file, long position, byte[] buffer, int from, int length)
            throws IOException {
        int read = 0;
        while (read < length) {
            int n = in.read(buffer, from + read, length - read);
            if (n < 0) {
                throw new CorruptLogException(
                        file,
                        position + from + read,
                        "file ends " + (length - read) + " bytes early (truncated segment)");
            }
            read += n;
        }
    }
}
