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

import java.io.DataInput;
import java.io.EOFException;
import java.io.IOException;

/**
 * The format of one record: the checkpoint that wrote it, the state id (an index into the batch header's state
 * table), the serialized key and namespace, and the serialized value or a tombstone. Records keep
 * their checkpoint id when compaction copies them, so "latest wins" holds in any reading order.
 *
 * <pre>
 * record := checkpointId:varlong stateId:varint keyLength:varint key
 *           (valueLength + 1):varint value      -- 0: a tombstone, no value
 * </pre>
 *
 * Variable-length integers (7 bits a byte, low bits first): records of small keys and values would
 * otherwise be mostly fixed-width fields. {@link RecordCursor} reads records in place.
 */
public final class RecordFormat {

    private RecordFormat() {}

    /**
     * Appends a record of key group {@code keyGroup}, written by checkpoint {@code checkpointId}, to
     * {@code target} (a null {@code value}: a tombstone); returns its length.
     */
    public static int write(
            Target target,
            int keyGroup,
            long checkpointId,
            int stateId,
            byte[] keyNs,
            int keyNsOffset,
            int keyNsLength,
            byte[] value,
            int valueOffset,
            int valueLength)
            throws IOException {
        DataOutputSerializer out = target.next(keyGroup, checkpointId);
        int start = out.length();
        writeVar(out, checkpointId);
        writeVar(out, stateId);
        writeVar(out, keyNsLength);
        out.write(keyNs, keyNsOffset, keyNsLength);
        if (value == null) {
            out.writeByte(0);
        } else {
            writeVar(out, valueLength + 1L);
            out.write(value, valueOffset, valueLength);
        }
        return out.length() - start;
    }

    /** Where {@link #write} appends records: batches, whose records are kept per key group. */
    public interface Target {
        /**
         * The buffer that the record of {@code keyGroup} written by {@code checkpointId} that
         * {@link #write} is about to append goes to; called once per record.
         */
        DataOutputSerializer next(int keyGroup, long checkpointId) throws IOException;
    }

    /**
     * Receives one encoded record of a key group, read in place; {@code position}: where it starts
     * among the key group's record bytes.
     */
    public interface EncodedVisitor {
        void accept(
                int keyGroup,
                int position,
                int stateId,
                byte[] bytes,
                int keyOffset,
                int keyLength,
                int encodedLength,
                boolean tombstone);
    }

    /** Visits the records of {@code keyGroup} encoded in {@code bytes[0, length)}, in order. */
    static void forEach(int keyGroup, byte[] bytes, int length, EncodedVisitor visitor)
            throws IOException {
        RecordCursor records =
                new RecordCursor()
                        .reset(
                                KeyGroupRecords.stored(
                                        bytes, 0, length, "batch in memory, key group " + keyGroup, 0));
        while (records.next()) {
            visitor.accept(
                    keyGroup,
                    records.positionInKeyGroup(),
                    records.stateId(),
                    bytes,
                    records.keyOffset(),
                    records.keyLength(),
                    records.encodedLength(),
                    records.isTombstone());
        }
    }

    /** Skips one record of {@code in}. */
    static void skip(DataInput in) throws IOException {
        readVar(in);
        readVar(in);
        skipFully(in, checkedLength(readVar(in)));
        long valueLength = readVar(in) - 1;
        if (valueLength > 0) {
            skipFully(in, checkedLength(valueLength));
        }
    }

    private static void skipFully(DataInput in, int n) throws IOException {
        if (in.skipBytes(n) != n) {
            throw new EOFException("record cut off");
        }
    }

    static int checkedLength(long length) throws IOException {
        if (length < 0 || length > Integer.MAX_VALUE) {
            throw new IOException("impossible length " + length);
        }
        return (int) length;
    }

    private static void writeVar(DataOutputSerializer out, long v) throws IOException {
        while ((v & ~0x7FL) != 0) {
            out.writeByte((int) ((v & 0x7F) | 0x80));
            v >>>= 7;
        }
        out.writeByte((int) v);
    }

    static long readVar(DataInput in) throws IOException {
        long v = 0;
        for (int shift = 0; shift < 64; shift += 7) {
            byte b = in.readByte();
            v |= (long) (b & 0x7F) << shift;
            if (b >= 0) {
                return v;
            }
        }
        throw new IOException("malformed variable-length integer");
    }
}
