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

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.BufferedOutputStream;
import java.io.Closeable;
import java.io.FilterOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.util.UUID;

/**
 * Appends records to one subtask's persisted stream. Every segment this writer creates is new and
 * written only by it (name: {@code seg-<sequence>-<random>.log}); a later attempt never appends to
 * it, because Flink file systems cannot reopen a closed file for append. Segments roll at a size
 * threshold. {@link #sync()} makes everything appended so far durable on the calling thread;
 * {@link #flushForSync()} hands the appended bytes to the file system and returns the segment's
 * {@link SegmentSync}, so that another thread makes them durable while this one goes on appending.
 * Either way, every checkpointed position lies in durable bytes before the checkpoint completes.
 */
public final class LogWriter implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(LogWriter.class);
    private static final int BUFFER_BYTES = 64 * 1024;
    private static final String SEGMENT_PREFIX = "seg-";
    private static final String SEGMENT_SUFFIX = ".log";
    private static final int SEQUENCE_DIGITS = 10;

    private final FileSystem fs;
    private final Path directory;
    private final int subtask;
    private final long segmentBytes;
    private final long indexIntervalBytes;
    private final LogPermissions permissions;

    private long sequence;
    private Path segmentPath;
    private FSDataOutputStream segmentRaw;
    private BufferedOutputStream segmentOut;
    private FSDataOutputStream indexOut;
    private SegmentSync segmentSync;
    private long offset;
    private long lastRecordOffset;
    private long offsetAtLastIndexEntry;
    private boolean segmentHasRecords;
    private long bytesWritten;
    private byte[] frame = new byte[256];
    private final byte[] indexEntry = new byte[TimeIndex.ENTRY_BYTES];

    /**
     * Opens a new segment that continues the stream after {@code predecessorEnd} (null for a new
     * stream), numbered {@code firstSequence}.
     */
    public LogWriter(
            FileSystem fs,
            Path directory,
            int subtask,
            long firstSequence,
            @Nullable LogPosition predecessorEnd,
            long segmentBytes,
            long indexIntervalBytes,
            LogPermissions permissions)
            throws IOException {
        this.fs = fs;
        this.directory = directory;
        this.subtask = subtask;
        this.segmentBytes = segmentBytes;
        this.indexIntervalBytes = indexIntervalBytes;
        this.sequence = firstSequence;
        this.permissions = permissions;
        // Before the first segment (whose creation would make the directory with the umask's
        // permissions): no record is ever readable by other users.
        fs.mkdirs(directory);
        permissions.restrictDirectory(fs, directory);
        openSegment(predecessorEnd);
    }

    private void openSegment(@Nullable LogPosition predecessorEnd) throws IOException {
        String name =
                String.format(
                        "%s%0" + SEQUENCE_DIGITS + "d-%s%s",
                        SEGMENT_PREFIX, sequence, UUID.randomUUID().toString().substring(0, 8), SEGMENT_SUFFIX);
        segmentPath = new Path(directory, name);
        segmentRaw = fs.create(segmentPath, FileSystem.WriteMode.NO_OVERWRITE);
        permissions.restrictFile(fs, segmentPath);
        segmentOut = new BufferedOutputStream(new UnflushedOutputStream(segmentRaw), BUFFER_BYTES);
        indexOut = fs.create(TimeIndex.indexFileOf(segmentPath), FileSystem.WriteMode.NO_OVERWRITE);
        permissions.restrictFile(fs, TimeIndex.indexFileOf(segmentPath));
        segmentSync = new SegmentSync(segmentPath, segmentRaw, indexOut);
        byte[] header = SegmentHeader.encode(subtask, sequence, predecessorEnd);
        segmentOut.write(header);
        offset = header.length;
        bytesWritten += header.length;
        segmentHasRecords = false;
        LOG.info("Opened CEC log segment {} (subtask {}, continues after {})", segmentPath, subtask, predecessorEnd);
    }

    /** The sequence number in a segment file's name, or -1 if {@code name} is not a segment's. */
    public static long sequenceOf(String name) {
        int end = SEGMENT_PREFIX.length() + SEQUENCE_DIGITS;
        if (!name.startsWith(SEGMENT_PREFIX) || !name.endsWith(SEGMENT_SUFFIX) || name.length() <= end) {
            return -1;
        }
        try {
            return Long.parseLong(name.substring(SEGMENT_PREFIX.length(), end));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    /** Appends one record whose payload is {@code payload[0, length)}. */
    public void append(long timestamp, byte[] payload, int length) throws IOException {
        int frameLength = LogRecord.FRAME_OVERHEAD + length;
        if (segmentHasRecords && offset + frameLength > segmentBytes) {
            roll();
        }
        if (!segmentHasRecords || offset - offsetAtLastIndexEntry >= indexIntervalBytes) {
            TimeIndex.encode(timestamp, offset, indexEntry);
            indexOut.write(indexEntry);
            offsetAtLastIndexEntry = offset;
        }
        if (frame.length < frameLength) {
            frame = new byte[Math.max(frameLength, frame.length * 2)];
        }
        LogRecord.encode(timestamp, payload, length, frame);
        segmentOut.write(frame, 0, frameLength);
        lastRecordOffset = offset;
        offset += frameLength;
        bytesWritten += frameLength;
        segmentHasRecords = true;
    }

    private void roll() throws IOException {
        LogPosition end = position();
        closeSegment();
        sequence++;
        openSegment(end);
    }

    /** The position right after the last appended record. */
    public LogPosition position() {
        return new LogPosition(segmentPath.getName(), offset);
    }

    /** The position of the last appended record's first byte. */
    public LogPosition lastRecordPosition() {
        return new LogPosition(segmentPath.getName(), lastRecordOffset);
    }

    public long sequence() {
        return sequence;
    }

    /** Bytes appended by this writer, headers included. */
    public long bytesWritten() {
        return bytesWritten;
    }

    /** Flushes and syncs the segment and its index. */
    public void sync() throws IOException {
        segmentOut.flush();
        segmentSync.sync();
    }

    /**
     * Hands every appended byte to the file system without waiting for it to be durable; the
     * returned {@link SegmentSync} makes it durable from any thread (a later roll closes the
     * segment, which makes it durable as well).
     */
    public SegmentSync flushForSync() throws IOException {
        segmentOut.flush();
        return segmentSync;
    }

    private void closeSegment() throws IOException {
        segmentOut.flush();
        segmentSync.close();
    }

    @Override
    public void close() throws IOException {
        if (segmentOut != null) {
            closeSegment();
            segmentOut = null;
        }
    }

    /**
     * Passes writes to the segment's file stream but not flushes: on HDFS a flush is an hflush that
     * waits for the pipeline, and the writer's bytes need to be durable only when synced.
     */
    private static final class UnflushedOutputStream extends FilterOutputStream {
        UnflushedOutputStream(OutputStream out) {
            super(out);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            out.write(b, off, len);
        }

        @Override
        public void flush() {}
    }
}
