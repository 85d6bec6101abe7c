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

import org.appendlog.statebackend.log.BatchLocation;

import java.util.Arrays;

/**
 * One restore thread's share of rebuilding the index: it reads each key group's records newest
 * first, so the first record of an entry is its latest and every later one is dead, and neither
 * is looked at twice. A tombstone read first marks its entry as deleted for the rest of the key
 * group ({@link #keyGroupDone} removes the marks). Live bytes are counted per segment on the
 * thread and added to the segments' counts at {@link #close}: two threads adding to one
 * segment's count for every record made each wait for the other's cache line.
 */
public final class IndexRebuild implements AutoCloseable {

    private final LogIndex index;
    private long[] liveBytes = new long[16];
    private int[] tombstones = new int[16];
    private int tombstoneCount;
    private final RecordAt at = new RecordAt();

    IndexRebuild(LogIndex index) {
        this.index = index;
    }

    /** The segment number under which {@link #indexIfFirst} takes the records of {@code batch}. */
    public int segmentId(BatchLocation batch) {
        return index.segmentId(batch.segment());
    }

    /** The batch number under which {@link #indexIfFirst} takes the records of {@code batch}. */
    public int batchNumber(BatchLocation batch) {
        return index.segmentStats(segmentId(batch)).batchNumber(batch.offset());
    }

    /**
     * Whether this record, {@code length} bytes at {@code position} among its key group's bytes
     * in the batch that {@code segmentId} and {@code batchNumber} name, is the first one read of
     * its entry (and so its latest); it is then indexed, or for a tombstone marked.
     */
    public boolean indexIfFirst(
            int keyGroup,
            int state,
            byte[] key,
            int offset,
            int keyLength,
            int segmentId,
            int batchNumber,
            int position,
            int length,
            boolean tombstone) {
        KeyGroupIndex table = index.of(keyGroup);
        int entry =
                table.putIfAbsent(
                        state,
                        key,
                        offset,
                        keyLength,
                        at.set(segmentId, batchNumber, position, length));
        if (entry < 0) {
            return false;
        }
        if (tombstone) {
            index.segmentStats(segmentId).tombstoneIndexed();
            if (tombstoneCount == tombstones.length) {
                tombstones = Arrays.copyOf(tombstones, tombstoneCount * 2);
            }
            tombstones[tombstoneCount++] = entry;
        } else {
            if (segmentId >= liveBytes.length) {
                liveBytes = Arrays.copyOf(liveBytes, Math.max(segmentId + 1, liveBytes.length * 2));
            }
            liveBytes[segmentId] += length;
        }
        return true;
    }

    /** Every record of {@code keyGroup} was read: its deleted entries leave the index. */
    public void keyGroupDone(int keyGroup) {
        KeyGroupIndex table = index.of(keyGroup);
        for (int i = 0; i < tombstoneCount; i++) {
            table.forget(tombstones[i]);
        }
        tombstoneCount = 0;
    }

    /** Adds the live bytes counted on this thread to the segments' counts. */
    @Override
    public void close() {
        for (int id = 0; id < liveBytes.length; id++) {
            if (liveBytes[id] != 0) {
                index.segmentStats(id).live(liveBytes[id]);
            }
        }
        liveBytes = new long[0];
    }
}
