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

import org.apache.flink.core.memory.DataInputDeserializer;

import java.io.IOException;

/**
 * Walks records ({@link RecordFormat}) where they lie encoded in a byte array: after each {@link
 * #next()}, the record's checkpoint id and state id and where its key and value are in {@link #bytes()}.
 * Nothing is copied and nothing allocated per record, so a reader that needs few of the records
 * (compaction: most are dead) pays for the others only the parsing of their lengths. This is the
 * one decoder of the record format for bytes in memory; one cursor serves any number of walks.
 */
public final class RecordCursor {

    private final DataInputDeserializer in = new DataInputDeserializer();
    private KeyGroupRecords records;
    private byte[] bytes;
    private int end;

    private int offset;
    private int encodedLength;
    private long checkpointId;
    private int stateId;
    private int keyOffset;
    private int keyLength;
    private int valueOffset;
    /** -1 for a tombstone. */
    private int valueLength;

    /** Positions the cursor before the first of {@code records}. */
    public RecordCursor reset(KeyGroupRecords records) {
        return reset(records, records.offset);
    }

    /** Positions the cursor before the one of {@code records} that starts at {@code bytes[at]}. */
    public RecordCursor reset(KeyGroupRecords records, int at) {
        in.setBuffer(records.bytes, at, records.end() - at);
        this.records = records;
        this.bytes = records.bytes;
        this.end = records.end();
        this.offset = at;
        this.encodedLength = 0;
        return this;
    }

    /**
     * Moves to the next record; false when there is none.
     *
     * @throws CorruptLogException naming the file and the record's offset if it is malformed
     */
    public boolean next() throws CorruptLogException {
        int start = offset + encodedLength;
        if (start >= end) {
            return false;
        }
        try {
            checkpointId = RecordFormat.readVar(in);
            long state = RecordFormat.readVar(in);
            if (state < 0 || state > Integer.MAX_VALUE) {
                throw new IOException("impossible state id " + state);
            }
            stateId = (int) state;
            keyLength = RecordFormat.checkedLength(RecordFormat.readVar(in));
            keyOffset = in.getPosition();
            in.skipBytesToRead(keyLength);
            long value = RecordFormat.readVar(in) - 1;
            valueLength = value < 0 ? -1 : RecordFormat.checkedLength(value);
            valueOffset = in.getPosition();
            if (valueLength > 0) {
                in.skipBytesToRead(valueLength);
            }
        } catch (IOException e) {
            throw new CorruptLogException(
                    records.file(), records.positionOf(start), "unreadable record: " + e);
        }
        offset = start;
        encodedLength = in.getPosition() - start;
        return true;
    }

    /** The bytes the records are read from. */
    public byte[] bytes() {
        return bytes;
    }

    /** Where the current record starts in {@link #bytes()}. */
    public int offset() {
        return offset;
    }

    /**
     * Where the current record starts among its key group's record bytes (as stored raw, or
     * decompressed): the index keeps it, and {@link #reset(KeyGroupRecords, int)} finds the record
     * again at {@code records.offset} plus it.
     */
    public int positionInKeyGroup() {
        return offset - records.offset;
    }

    /** The number of bytes the current record takes. */
    public int encodedLength() {
        return encodedLength;
    }

    /** Where the current record is in its file, as errors name it after {@link #file()}. */
    public String position() {
        return records.positionOf(offset);
    }

    public String file() {
        return records.file();
    }

    public long checkpointId() {
        return checkpointId;
    }

    /** An index into the state table of the batch the record is in. */
    public int stateId() {
        return stateId;
    }

    public int keyOffset() {
        return keyOffset;
    }

    public int keyLength() {
        return keyLength;
    }

    public boolean isTombstone() {
        return valueLength < 0;
    }

    public int valueOffset() {
        return valueOffset;
    }

    /** -1 for a tombstone. */
    public int valueLength() {
        return valueLength;
    }
}
