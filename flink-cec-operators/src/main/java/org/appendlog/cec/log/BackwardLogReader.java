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

import java.io.Closeable;
import java.io.IOException;

/**
 * Reads a stream backwards from a position, newest record first, following the segments' back
 * links (see {@link SegmentHeader}). Reads in chunks so that a recovery scan that stops early
 * reads only the tail it needs.
 */
public final class BackwardLogReader implements Closeable {

    private static final int CHUNK_BYTES = 1 << 20;

    private final FileSystem fs;
    private final Path directory;
    @Nullable private final LogStart start;

    private SegmentExtent extent;
    private Path segment;
    private FSDataInputStream in;
    private long floor;
    private long pos;
    private byte[] buffer = new byte[0];
    private long bufferStart;
    private int bufferLength;
    private long bytesRead;

    public BackwardLogReader(FileSystem fs, Path directory, LogPosition from) throws IOException {
        this.fs = fs;
        this.directory = directory;
        this.start = LogStart.read(fs, directory).orElse(null);
        open(SegmentExtent.endingAt(fs, directory, from));
    }

    private void open(SegmentExtent extent) throws IOException {
        this.extent = extent;
        segment = extent.path();
        in = fs.open(segment);
        floor = extent.firstRecordOffset();
        pos = extent.validLength();
        bufferLength = 0;
    }

    /** The next older record, or null when the start of the stream is reached. */
    @Nullable
    public LogRecord previous() throws IOException {
        while (pos == floor) {
            SegmentExtent previous = extent.predecessor(fs, directory, start);
            if (previous == null) {
                return null;
            }
            in.close();
            open(previous);
        }
        ensure(pos - 4, pos);
        int len = LogRecord.getInt(buffer, (int) (pos - 4 - bufferStart));
        long start = pos - len - 12L;
        if (len < 8 || start < floor) {
            throw new CorruptCecLogException(
                    segment,
                    pos - 4,
                    "trailer length " + len + " reaches before the first record at " + floor);
        }
        ensure(start, pos);
        LogRecord record = LogRecord.decode(buffer, (int) (start - bufferStart), start, segment.toString());
        pos = start;
        return record;
    }

    /** The position of the record {@link #previous()} returned last. */
    public LogPosition position() {
        return new LogPosition(segment.getName(), pos);
    }

    /** Bytes read from the file system so far. */
    public long bytesRead() {
        return bytesRead;
    }

    private void ensure(long from, long to) throws IOException {
        if (from >= bufferStart && to <= bufferStart + bufferLength) {
            return;
        }
        long start = Math.max(floor, to - Math.max(CHUNK_BYTES, to - from));
        if (to - start > Integer.MAX_VALUE - 8) {
            throw new CorruptCecLogException(
                    segment, from, "a record of " + (to - from) + " bytes, more than an array holds");
        }
        int length = (int) (to - start);
        if (buffer.length < length) {
            buffer = new byte[length];
        }
        in.seek(start);
        int done = 0;
        while (done < length) {
            int r = in.read(buffer, done, length - done);
            if (r < 0) {
                throw new CorruptCecLogException(
                        segment, start + done, "the segment ends before offset " + to + " (truncated file)");
            }
            done += r;
        }
        bufferStart = start;
        bufferLength = length;
        bytesRead += length;
    }

    @Override
    public void close() throws IOException {
        in.close();
    }
}
