package org.appendlog.cec.log;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileSystem;

import javax.annotation.Nullable;

import java.io.BufferedInputStream;
import java.io.Closeable;
import java.io.DataInputStream;
import java.io.EOFException;
import java.io.IOException;
import java.util.List;

/**
 * Reads a stream's chain of segment extents forward, returning only records whose timestamp is
 * at or after a start timestamp. The time index selects the segment and offset where reading
 * starts, so a read from a late timestamp skips the older log.
 */
public final class ForwardLogReader implements Closeable {

    private final FileSystem fs;
    private final List<SegmentExtent> chain;
    private final long fromTimestamp;

    private int extentIndex;
    private long pos;
    @Nullable private DataInputStream in;
    private byte[] frame = new byte[256];

    /**
     * @param resumeAt where a previous reader stopped (segment and offset of the next record), or
     *     null to seek by {@code fromTimestamp}
     */
    public ForwardLogReader(
            FileSystem fs, List<SegmentExtent> chain, long fromTimestamp, @Nullable LogPosition resumeAt)
            throws IOException {
        this.fs = fs;
        this.chain = chain;
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
            TimeIndex index = TimeIndex.read(fs, extent.path(), extent.validLength());
            if (!index.isEmpty() && index.firstTimestamp() < fromTimestamp) {
                extentIndex = i;
                pos = index.seekOffset(fromTimestamp, extent.firstRecordOffset());
                return;
            }
        }
    }

    /** The position of the next record this reader would return (for checkpointing a reader). */
    public LogPosition position() {
        if (extentIndex >= chain.size()) {
            SegmentExtent last = chain.get(chain.size() - 1);
            return new LogPosition(last.path().getName(), last.validLength());
        }
        return new LogPosition(chain.get(extentIndex).path().getName(), pos);
    }

    /** The next record at or after the start timestamp, or null at the end of the valid stream. */
    @Nullable
    public LogRecord next() throws IOException {
        while (true) {
            while (extentIndex < chain.size() && pos >= chain.get(extentIndex).validLength()) {
                closeStream();
                extentIndex++;
                if (extentIndex < chain.size()) {
                    pos = chain.get(extentIndex).firstRecordOffset();
                }
            }
            if (extentIndex >= chain.size()) {
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
                int len = in.readInt();
                int frameLength = len + 12;
                if (len < 8 || pos + frameLength > extent.validLength()) {
                    throw new IOException(
                            "Corrupt CEC log record in " + extent.path() + " at offset " + pos
                                    + ": length " + len + " runs past the valid end " + extent.validLength());
                }
                if (frame.length < frameLength) {
                    frame = new byte[Math.max(frameLength, frame.length * 2)];
                }
                LogRecord.putInt(frame, 0, len);
                in.readFully(frame, 4, frameLength - 4);
                record = LogRecord.decode(frame, 0, pos, extent.path().toString());
            } catch (EOFException e) {
                throw new IOException(
                        "CEC log segment " + extent.path() + " ends at offset " + pos
                                + " before its recorded valid length " + extent.validLength(), e);
            }
            pos = record.endOffset();
            if (record.timestamp() >= fromTimestamp) {
                return record;
            }
        }
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
