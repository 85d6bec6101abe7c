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

import java.io.IOException;
import java.util.Arrays;

/**
 * The sparse time index of one segment: a side file of fixed 16-byte entries (timestamp, offset),
 * one for the first record of the segment and then one whenever at least {@code
 * cec.log.index-interval} bytes were appended since the previous entry. Timestamps never decrease
 * along a stream, so the last entry before a timestamp bounds where reading from it must start.
 * Entries pointing beyond the segment's valid length (a tail left by a failed attempt), out of
 * order, and a torn last entry are ignored; a reader checks the record an entry names.
 */
public final class TimeIndex {

    static final int ENTRY_BYTES = 16;
    static final String SUFFIX = ".idx";

    private final long[] timestamps;
    private final long[] offsets;

    private TimeIndex(long[] timestamps, long[] offsets) {
        this.timestamps = timestamps;
        this.offsets = offsets;
    }

    static Path indexFileOf(Path segment) {
        return new Path(segment.getParent(), segment.getName() + SUFFIX);
    }

    static void encode(long timestamp, long offset, byte[] entry) {
        LogRecord.putLong(entry, 0, timestamp);
        LogRecord.putLong(entry, 8, offset);
    }

    /**
     * The index of {@code segment}, whose records start at {@code firstRecordOffset}: its entries
     * up to the first that points outside {@code [firstRecordOffset, validLength)} or out of
     * order (a tail left by a failed attempt, or damage).
     */
    public static TimeIndex read(FileSystem fs, Path segment, long firstRecordOffset, long validLength)
            throws IOException {
        Path file = indexFileOf(segment);
        if (!fs.exists(file)) {
            return new TimeIndex(new long[0], new long[0]);
        }
        byte[] bytes;
        try (FSDataInputStream in = fs.open(file)) {
            bytes = in.readAllBytes();
        }
        int n = bytes.length / ENTRY_BYTES;
        long[] ts = new long[n];
        long[] off = new long[n];
        int kept = 0;
        for (int i = 0; i < n; i++) {
            long timestamp = LogRecord.getLong(bytes, i * ENTRY_BYTES);
            long offset = LogRecord.getLong(bytes, i * ENTRY_BYTES + 8);
            if (offset < firstRecordOffset
                    || offset >= validLength
                    || (kept > 0 && (offset <= off[kept - 1] || timestamp < ts[kept - 1]))) {
                break;
            }
            ts[kept] = timestamp;
            off[kept] = offset;
            kept++;
        }
        return new TimeIndex(Arrays.copyOf(ts, kept), Arrays.copyOf(off, kept));
    }

    public boolean isEmpty() {
        return timestamps.length == 0;
    }

    /** Timestamp of the segment's first record; only valid if not {@link #isEmpty()}. */
    public long firstTimestamp() {
        return timestamps[0];
    }

    /**
     * The entry from which a forward scan finds every record with timestamp at or after {@code
     * timestamp}: the last one strictly before it; only if {@link #firstTimestamp()} is before it.
     */
    public int entryBefore(long timestamp) {
        int entry = 0;
        for (int i = 1; i < timestamps.length && timestamps[i] < timestamp; i++) {
            entry = i;
        }
        return entry;
    }

    public long timestamp(int entry) {
        return timestamps[entry];
    }

    public long offset(int entry) {
        return offsets[entry];
    }

    public int size() {
        return timestamps.length;
    }
}
