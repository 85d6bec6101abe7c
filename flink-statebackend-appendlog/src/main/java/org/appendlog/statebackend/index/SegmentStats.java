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
    private volatile long lastWrite = System.currentTimeMillis();

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

    /** Dead bytes / total bytes over {@code segments}. */
    public static double dirtyRatio(java.util.Collection<SegmentStats> segments) {
        long total = 0;
        long live = 0;
        for (SegmentStats s : segments) {
            total += s.totalBytes();
            live += Math.min(s.liveBytes(), s.totalBytes());
        }
        return total == 0 ? 0 : (double) (total - live) / total;
    }

    /** When a batch was last added: compaction waits {@code min-lag} after it. */
    public long lastWriteMillis() {
        return lastWrite;
    }

    /** The fraction of the segment's bytes that are still live. */
    public double utilization() {
        long total = totalBytes();
        return total == 0 ? 0 : Math.min(1.0, (double) liveBytes() / total);
    }

    void added(long bytes) {
        totalBytes.addAndGet(bytes);
        lastWrite = System.currentTimeMillis();
    }

    void live(long bytes) {
        liveBytes.addAndGet(bytes);
    }

    void died(int bytes) {
        liveBytes.addAndGet(-bytes);
    }
}
