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
import java.util.List;

/**
 * The batches one compaction pass replaces, numbered 0, 1, ... in the pass's order: the index
 * names the live records among them by these numbers ({@link LogIndex#collectLive}). Looking up an
 * entry's batch takes two array reads, since the index tests every live entry of the pass's key
 * groups against the set.
 */
public final class CompactedBatches {

    /** Per segment number, per batch number in the segment: the pass's number, or -1. */
    private final int[][] bySegment;

    private final int[] segments;
    private final int[] batches;
    private final boolean[] mayHoldTombstones;

    CompactedBatches(LogIndex index, List<BatchLocation> locations) {
        int size = locations.size();
        segments = new int[size];
        batches = new int[size];
        mayHoldTombstones = new boolean[size];
        int maxSegment = -1;
        for (int i = 0; i < size; i++) {
            RecordAt place = index.placeOf(locations.get(i));
            segments[i] = place.segment;
            batches[i] = place.batch;
            mayHoldTombstones[i] = index.segmentStats(place.segment).mayHoldTombstones();
            maxSegment = Math.max(maxSegment, segments[i]);
        }
        bySegment = new int[maxSegment + 1][];
        for (int i = 0; i < size; i++) {
            int[] numbers = bySegment[segments[i]];
            if (numbers == null || numbers.length <= batches[i]) {
                int length = Math.max(batches[i] + 1, numbers == null ? 0 : numbers.length * 2);
                int[] grown = new int[length];
                Arrays.fill(grown, -1);
                if (numbers != null) {
                    System.arraycopy(numbers, 0, grown, 0, numbers.length);
                }
                numbers = grown;
                bySegment[segments[i]] = numbers;
            }
            numbers[batches[i]] = i;
        }
    }

    public int size() {
        return segments.length;
    }

    /**
     * Whether batch {@code number} may hold a tombstone that is its entry's latest record: a
     * pass looks for tombstones only in such batches.
     */
    public boolean mayHoldTombstones(int number) {
        return mayHoldTombstones[number];
    }

    /** The pass's number of the segment's batch, or -1 if the pass does not replace it. */
    int numberOf(int segment, int batch) {
        if (segment >= bySegment.length) {
            return -1;
        }
        int[] numbers = bySegment[segment];
        return numbers != null && batch < numbers.length ? numbers[batch] : -1;
    }

    int segment(int number) {
        return segments[number];
    }

    int batch(int number) {
        return batches[number];
    }
}
