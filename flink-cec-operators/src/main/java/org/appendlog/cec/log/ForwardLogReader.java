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

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * Reads a stream's chain of segment extents forward, returning only records whose timestamp is
 * at or after a start timestamp. The time index selects the segment and offset where reading
 * starts, so a read from a late timestamp skips the older log. The record an index entry names
 * must carry the entry's timestamp; if it does not, the index is damaged and the read starts
 * over from the stream's first record.
 */
public final class ForwardLogReader implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(ForwardLogReader.class);

    private final FileSystem fs;
    private final List<SegmentExtent> chain;
    private final long fromTimestamp;

    private int extentIndex;
    private long pos;
    @Nullable private DataInputStream in;
    private byte[] frame = new byte[256];
    /** The timestamp that the time index gives the record at {@link #pos}, until it is read. */
    @Nullable private Long expectedTimestamp;

    /**
     * @param resumeAt where a previous reader stopped (segment and offset of the next record), or
     *     null to seek by {@code fromTimestamp}
     */
    public ForwardLogReader(
            FileSystem fs, List<SegmentExtent> chain, long fromTimestamp, @Nullable LogPosition resumeAt)
            throws IOException {
        this.fs = fs;
        this.chain = new ArrayList<>(chain);
        this.fromTimestamp = fromTimestamp;
        if (resumeAt != null) {
            extentIndex = indexOf(resumeAt.segment());
            pos = resumeAt.offset();
        } else {
            seek();
        }
    }

    private int indexOf(String segment) throws IOException {
        for (int i = 0; i < chain.size(); i++) {
            if (chain.get(i).path().getName().equals(segment)) {
                return i;
            }
        }
        throw new IOException("Segment " + segment + " is not on the stream's chain " + chain);
    }

    private void seek() throws IOException {
        // The last segment whose first record is older than the timestamp holds the first record at or
        // after it, or that record is the first of the next segment.
        extentIndex = 0;
        pos = chain.isEmpty() ? 0 : chain.get(0).firstRecordOffset();
        for (int i = chain.size() - 1; i >= 0; i--) {
            SegmentExtent extent = chain.get(i);
            TimeIndex index = TimeIndex.read(fs, extent.path(), extent.firstRecordOffset(), extent.validLength());
            if (!index.isEmpty() && index.firstTimestamp() < fromTimestamp) {
                extentIndex = i;
                int entry = index.entryBefore(fromTimestamp);
                pos = index.offset(entry);
                expectedTimestamp = index.timestamp(entry);
                return;
            }
        }
    }

    /** The position of the next record this reader would return (for checkpointing a reader). */
    public LogPosition position() {
        return new LogPosition(chain.get(extentIndex).path().getName(), pos);
    }

    /** Bytes of the chain from the reader's position to its end: how far it is behind that end. */
    public long bytesBehind() {
        long behind = 0;
        for (int i = extentIndex; i < chain.size(); i++) {
            SegmentExtent extent = chain.get(i);
            behind += extent.validLength() - (i == extentIndex ? pos : extent.firstRecordOffset());
        }
        return behind;
    }

    /**
     * Continues the chain with {@code continuation}, a later commit's extents from this chain's
     * last segment on (see {@link PersistedStream#chainFrom}): the stream was committed further.
     *
     * @throws IOException if the stream now ends in that segment before what this reader read
     */
    public void extend(List<SegmentExtent> continuation) throws IOException {
        int last = chain.size() - 1;
        SegmentExtent first = continuation.get(0);
        if (!first.path().equals(chain.get(last).path())) {
            throw new IllegalArgumentException(
                    "The continuation " + continuation + " does not start with the chain's last segment " + chain.get(last));
        }
        if (extentIndex == last && pos > first.validLength()) {
            throw new IOException(
                    "The persisted stream now ends at " + first.path() + "@" + first.validLength()
                            + ", before the position " + pos + " this reader reached: it was restored to an earlier position");
        }
        // Reopened at the next read: a file system may not show a reader bytes appended after it opened.
        closeStream();
        chain.set(last, first);
        chain.addAll(continuation.subList(1, continuation.size()));
    }

    /**
     * The next record at or after the start timestamp, or null at the end of the valid stream (for
     * now: {@link #extend} may continue it).
     */
    @Nullable
    public LogRecord next() throws IOException {
        while (true) {
            // Stays in the last extent at its end, so that the chain can be extended from there.
            while (extentIndex < chain.size() - 1 && pos >= chain.get(extentIndex).validLength()) {
                closeStream();
                extentIndex++;
                pos = chain.get(extentIndex).firstRecordOffset();
            }
            if (chain.isEmpty() || pos >= chain.get(extentIndex).validLength()) {
                return null;
            }
            SegmentExtent extent = chain.get(extentIndex);
            if (in == null) {
                FSDataInputStream raw = fs.open(extent.path());
                raw.seek(pos);
                in = new DataInputStream(new BufferedInputStream(raw, 64 * 1024));
            }
            LogRecord record;
            try {
                record = readRecord(extent);
            } catch (CorruptCecLogException e) {
                if (expectedTimestamp == null) {
                    throw e;
                }
                readFromStart(extent, "no record can be read there: " + e.getMessage());
                continue;
            }
            if (expectedTimestamp != null) {
                // The index entry the read started at must name this record; else the index is
                // damaged, and the records it skipped may be wanted.
                long expected = expectedTimestamp;
                expectedTimestamp = null;
                if (record.timestamp() != expected) {
                    readFromStart(
                            extent,
                            "it gives timestamp " + expected + ", the record there has " + record.timestamp());
                    continue;
                }
            }
            pos = record.endOffset();
            if (record.timestamp() >= fromTimestamp) {
                return record;
            }
        }
    }

    private LogRecord readRecord(SegmentExtent extent) throws IOException {
        try {
            int len = in.readInt();
            long frameLength = len + 12L;
            if (len < 8 || pos + frameLength > extent.validLength()) {
                throw new CorruptCecLogException(
                        extent.path(),
                        pos,
                        "record length " + len + " runs past the valid end " + extent.validLength());
            }
            readFrame(len);
            return LogRecord.decode(frame, 0, pos, extent.path().toString());
        } catch (EOFException e) {
            throw new CorruptCecLogException(
                    extent.path(), pos, "segment ends before its recorded valid length " + extent.validLength(), e);
        }
    }

    /** Drops the time index's start after finding it wrong; reads from the stream's first record. */
    private void readFromStart(SegmentExtent extent, String why) throws IOException {
        LOG.warn(
                "The time index of {} is damaged at the entry for offset {}: {}; reading the stream from its start instead",
                extent.path(),
                pos,
                why);
        expectedTimestamp = null;
        closeStream();
        extentIndex = 0;
        pos = chain.get(0).firstRecordOffset();
    }

    /**
     * Reads the rest of the frame whose length field {@code len} was read into {@link #frame}.
     * The buffer grows with the bytes that are there, so that a damaged length fails at the
     * file's end instead of allocating it.
     */
    private void readFrame(int len) throws IOException {
        int frameLength = len + 12;
        int read = 4;
        while (true) {
            int chunk = Math.min(frame.length, frameLength) - read;
            in.readFully(frame, read, chunk);
            read += chunk;
            if (read == frameLength) {
                break;
            }
            frame = Arrays.copyOf(frame, (int) Math.min(frameLength, 2L * frame.length));
        }
        LogRecord.putInt(frame, 0, len);
    }

    private void closeStream() throws IOException {
        if (in != null) {
            in.close();
            in = null;
        }
    }

    @Override
    public void close() throws IOException {
        closeStream();
    }
}
