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

package org.appendlog.statebackend.index;

import org.appendlog.statebackend.memory.CacheWarmup;

import java.util.Arrays;

/**
 * Where each entry's latest record is ({@link RecordAt}: segment, batch, position, length), by
 * entry number, packed into one byte array. Each of the four numbers takes as many bytes as the
 * largest of its kind this key group has held, one to four, so that a place usually costs six to
 * eight bytes rather than four ints: segment numbers stay below 65,536 for a long time, a segment
 * holds few batches, a key group's records in one batch rarely reach 16 MB, and most values are
 * short. A larger number widens its kind for every entry, once; widths never narrow.
 */
final class RecordPlaces {

    private static final int SEGMENT = 0;
    private static final int BATCH = 1;
    private static final int POSITION = 2;
    private static final int LENGTH = 3;

    /** Bytes of each number, and where it starts in an entry's bytes. */
    private final int[] widths = {1, 1, 1, 1};
    private final int[] starts = {0, 1, 2, 3};
    private int stride = 4;
    private int capacity;
    private byte[] bytes;

    RecordPlaces(int capacity) {
        this.capacity = capacity;
        this.bytes = new byte[capacity * stride];
    }

    /** Room for entries numbered below {@code capacity}. */
    void grow(int capacity) {
        long length = (long) capacity * stride;
        if (length > Integer.MAX_VALUE - 8) {
            throw new IllegalStateException(
                    "The state log's index cannot place "
                            + capacity
                            + " entries of one key group ("
                            + stride
                            + " bytes each); raise the job's maximum parallelism to spread its"
                            + " keys over more key groups");
        }
        bytes = Arrays.copyOf(bytes, (int) length);
        this.capacity = capacity;
    }

    int segment(int entry) {
        return read(entry, SEGMENT);
    }

    int batch(int entry) {
        return read(entry, BATCH);
    }

    int position(int entry) {
        return read(entry, POSITION);
    }

    int length(int entry) {
        return read(entry, LENGTH);
    }

    /** Whether the entry's record is the one at ({@code segment}, {@code batch}, {@code position}). */
    boolean isAt(int entry, int segment, int batch, int position) {
        return segment(entry) == segment && batch(entry) == batch && position(entry) == position;
    }

    void set(int entry, RecordAt at) {
        widenFor(at);
        write(entry, SEGMENT, at.segment);
        write(entry, BATCH, at.batch);
        write(entry, POSITION, at.position);
        write(entry, LENGTH, at.length);
    }

    long heapBytes() {
        return bytes.length;
    }

    /** Bytes that the places of the first {@code entries} entries take. */
    long bytesOf(int entries) {
        return (long) entries * stride;
    }

    void warm(int entries) {
        CacheWarmup.read(bytes, entries * stride);
    }

    private int read(int entry, int kind) {
        int at = entry * stride + starts[kind];
        int value = 0;
        for (int i = widths[kind] - 1; i >= 0; i--) {
            value = (value << 8) | (bytes[at + i] & 0xff);
        }
        return value;
    }

    private void write(int entry, int kind, int value) {
        int at = entry * stride + starts[kind];
        for (int i = 0; i < widths[kind]; i++, value >>>= 8) {
            bytes[at + i] = (byte) value;
        }
    }

    private void widenFor(RecordAt at) {
        if (widthOf(at.segment) > widths[SEGMENT]
                || widthOf(at.batch) > widths[BATCH]
                || widthOf(at.position) > widths[POSITION]
                || widthOf(at.length) > widths[LENGTH]) {
            relayout(
                    Math.max(widths[SEGMENT], widthOf(at.segment)),
                    Math.max(widths[BATCH], widthOf(at.batch)),
                    Math.max(widths[POSITION], widthOf(at.position)),
                    Math.max(widths[LENGTH], widthOf(at.length)));
        }
    }

    /** Copies every place into an array laid out with the given widths. */
    private void relayout(int... newWidths) {
        RecordPlaces wider = new RecordPlaces(0);
        System.arraycopy(newWidths, 0, wider.widths, 0, newWidths.length);
        for (int kind = 1; kind < newWidths.length; kind++) {
            wider.starts[kind] = wider.starts[kind - 1] + newWidths[kind - 1];
        }
        wider.stride = wider.starts[LENGTH] + newWidths[LENGTH];
        wider.grow(capacity);
        for (int entry = 0; entry < capacity; entry++) {
            for (int kind = SEGMENT; kind <= LENGTH; kind++) {
                wider.write(entry, kind, read(entry, kind));
            }
        }
        System.arraycopy(wider.widths, 0, widths, 0, widths.length);
        System.arraycopy(wider.starts, 0, starts, 0, starts.length);
        stride = wider.stride;
        bytes = wider.bytes;
    }

    /** Bytes that {@code value} needs; a negative number, never a place's, would need four. */
    private static int widthOf(int value) {
        return Math.max(1, (Integer.SIZE - Integer.numberOfLeadingZeros(value) + 7) / Byte.SIZE);
    }
}
