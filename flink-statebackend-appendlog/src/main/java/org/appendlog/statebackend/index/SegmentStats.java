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

import java.util.Arrays;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Bytes of one segment: in batches that checkpoints refer to, and in records that are still the
 * latest of a live entry. Also the numbers by which index entries name the segment's batches, and
 * whether a tombstone was indexed in it.
 */
public final class SegmentStats {

    private final String segment;
    private final AtomicLong totalBytes = new AtomicLong();
    private final AtomicLong liveBytes = new AtomicLong();
    private volatile long lastWrite = System.currentTimeMillis();
    private volatile boolean tombstones;

    /** File offsets of the batches numbered so far, by number. */
    private long[] batchOffsets = new long[4];
    private int batches;

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

    /**
     * The number of the segment's batch at file offset {@code offset}, numbered now if it is new.
     * An int per index entry names the batch; a segment holds few batches, so a scan finds it.
     */
    synchronized int batchNumber(long offset) {
        for (int number = batches - 1; number >= 0; number--) {
            if (batchOffsets[number] == offset) {
                return number;
            }
        }
        if (batches == batchOffsets.length) {
            batchOffsets = Arrays.copyOf(batchOffsets, batches * 2);
        }
        batchOffsets[batches] = offset;
        return batches++;
    }

    /**
     * Whether the index saw a tombstone that was its entry's latest record in this segment: only
     * then may the segment hold a tombstone that compaction must copy (an older one is outranked
     * by its entry's newer record, wherever that is).
     */
    boolean mayHoldTombstones() {
        return tombstones;
    }

    void tombstoneIndexed() {
        tombstones = true;
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
