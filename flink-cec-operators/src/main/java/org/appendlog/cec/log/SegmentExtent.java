package org.appendlog.cec.log;

import org.apache.flink.core.fs.Path;

/** The valid part of one segment on a stream's chain: bytes {@code [header, validLength)}. */
public final class SegmentExtent {

    private final Path path;
    private final SegmentHeader header;
    private final long validLength;

    SegmentExtent(Path path, SegmentHeader header, long validLength) {
        this.path = path;
        this.header = header;
        this.validLength = validLength;
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
