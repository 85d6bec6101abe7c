package org.appendlog.statebackend.index;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes of one segment: in batches that checkpoints refer to, and in records that are still the
 * latest of a live entry.
 */
public final class SegmentStats {

    private final String segment;
    private final AtomicLong totalBytes = new AtomicLong();
    private final AtomicLong liveBytes = new AtomicLong();

    SegmentStats(String segment) {
        this.segment = segment;
    }

    public String segment() {
        return segment;
    }

    public long totalBytes() {
        return totalBytes.get();
    }

    public long liveBytes() {
        return liveBytes.get();
    }

    void added(long bytes) {
        totalBytes.addAndGet(bytes);
    }

    void live(int bytes) {
        liveBytes.addAndGet(bytes);
    }

    void died(int bytes) {
        liveBytes.addAndGet(-bytes);
    }
}
