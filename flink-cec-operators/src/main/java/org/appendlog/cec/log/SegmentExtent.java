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

import java.io.DataInputStream;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;

/** The valid part of one segment on a stream's chain: bytes {@code [header, validLength)}. */
public final class SegmentExtent {

    private final Path path;
    private final SegmentHeader header;
    private final long validLength;

    private SegmentExtent(Path path, SegmentHeader header, long validLength) {
        this.path = path;
        this.header = header;
        this.validLength = validLength;
    }

    /** The extent of the segment that {@code end} names in {@code directory}, up to {@code end}. */
    static SegmentExtent endingAt(FileSystem fs, Path directory, LogPosition end) throws IOException {
        Path path = new Path(directory, end.segment());
        return of(path, SegmentHeader.read(fs, path), end.offset());
    }

    /**
     * The extent that this segment's back link names, or null for a stream's first segment or
     * the segment where retention made the stream start: the segment must exist and come before
     * this one in the stream.
     */
    @Nullable
    SegmentExtent predecessor(FileSystem fs, Path directory, @Nullable LogStart start) throws IOException {
        LogPosition link = header.predecessorEnd();
        if (link == null || (start != null && start.segment().equals(path.getName()))) {
            return null;
        }
        Path previous = new Path(directory, link.segment());
        SegmentHeader previousHeader;
        try {
            previousHeader = SegmentHeader.read(fs, previous);
        } catch (FileNotFoundException e) {
            throw new CorruptCecLogException(
                    path,
                    32,
                    "the back link names " + previous + ", which is missing"
                            + (start == null ? "" : " (the " + start + ")"),
                    e);
        }
        SegmentHeader.checkBackLink(path, header.sequence(), previous, previousHeader);
        return of(previous, previousHeader, link.offset());
    }

    static SegmentExtent of(Path path, SegmentHeader header, long validLength) throws CorruptCecLogException {
        if (validLength < header.length()) {
            throw new CorruptCecLogException(
                    path, validLength, "the stream's end lies inside the segment's header of " + header.length() + " bytes");
        }
        return new SegmentExtent(path, header, validLength);
    }

    /** Timestamp of the extent's last record, or {@code Long.MIN_VALUE} if it holds none; reads only that record. */
    long newestTimestamp(FileSystem fs) throws IOException {
        if (validLength == firstRecordOffset()) {
            return Long.MIN_VALUE;
        }
        try (FSDataInputStream raw = fs.open(path)) {
            DataInputStream in = new DataInputStream(raw);
            raw.seek(validLength - 4);
            int len = in.readInt();
            long start = validLength - len - 12L;
            if (len < 8 || start < firstRecordOffset()) {
                throw new CorruptCecLogException(
                        path,
                        validLength - 4,
                        "trailer length " + len + " reaches before the first record at " + firstRecordOffset());
            }
            byte[] frame = new byte[len + 12];
            raw.seek(start);
            in.readFully(frame);
            return LogRecord.decode(frame, 0, start, path.toString()).timestamp();
        } catch (EOFException e) {
            throw new CorruptCecLogException(path, validLength, "the segment ends before its valid length", e);
        }
    }

    public Path path() {
        return path;
    }

    public SegmentHeader header() {
        return header;
    }

    public long validLength() {
        return validLength;
    }

    public long firstRecordOffset() {
        return header.length();
    }

    @Override
    public String toString() {
        return path.getName() + "[" + header.length() + ", " + validLength + ")";
    }
}
