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

/**
 * The live records that one compaction pass copies, as the index lists them (key group by key
 * group): for each, its entry, its batch by the pass's number ({@link CompactedBatches}), where it
 * starts among the batch's record bytes of its key group, its length, and where its copy starts in
 * the run. The pass copies exactly these records, without asking the index about any record it
 * reads; {@link LogIndex#moved} then moves each entry by its number.
 */
public final class RecordsToCopy {

    private int size;
    private int[] keyGroups = new int[64];
    private int[] entries = new int[64];
    private int[] batches = new int[64];
    private int[] positions = new int[64];
    private int[] lengths = new int[64];
    private int[] copyPositions = new int[64];

    void add(int keyGroup, int entry, int batch, int position, int length) {
        if (size == entries.length) {
            int capacity = size * 2;
            keyGroups = Arrays.copyOf(keyGroups, capacity);
            entries = Arrays.copyOf(entries, capacity);
            batches = Arrays.copyOf(batches, capacity);
            positions = Arrays.copyOf(positions, capacity);
            lengths = Arrays.copyOf(lengths, capacity);
            copyPositions = Arrays.copyOf(copyPositions, capacity);
        }
        keyGroups[size] = keyGroup;
        entries[size] = entry;
        batches[size] = batch;
        positions[size] = position;
        lengths[size] = length;
        size++;
    }

    public int size() {
        return size;
    }

    public int keyGroup(int record) {
        return keyGroups[record];
    }

    /** The record's batch, by the pass's number. */
    public int batch(int record) {
        return batches[record];
    }

    /** Where the record starts among its batch's record bytes of its key group. */
    public int position(int record) {
        return positions[record];
    }

    public int length(int record) {
        return lengths[record];
    }

    /** The record's copy starts at {@code position} among the run's bytes of its key group. */
    public void setCopyPosition(int record, int position) {
        copyPositions[record] = position;
    }

    int entry(int record) {
        return entries[record];
    }

    /** Where the record's copy starts among the run's bytes of its key group. */
    int copyPosition(int record) {
        return copyPositions[record];
    }
}
