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

package org.appendlog.statebackend.restore;

import org.appendlog.statebackend.log.KeyGroupRecords;
import org.appendlog.statebackend.log.LogScanner.Batch;
import org.appendlog.statebackend.log.RecordCursor;

import org.apache.flink.runtime.state.KeyGroupRange;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The records of a slice of key groups from every batch of a restore, visited key group by key
 * group, newest first: by checkpoint id, and within one checkpoint id later in the batches' order
 * first (a batch's marks follow its logged records and win). Records stay where they were read;
 * per record only its checkpoint id, part and offset are kept, in arrays reused from key group to
 * key group. The order is a counting sort over the few distinct checkpoint ids: linear time.
 */
final class SliceRecords {

    /** Receives each record, the cursor positioned on it. */
    @FunctionalInterface
    interface Visitor {
        void accept(Batch batch, RecordCursor record) throws IOException;
    }

    /** A key group's records as read from one batch. */
    private static final class Part {
        final Batch batch;
        final KeyGroupRecords records;

        Part(Batch batch, KeyGroupRecords records) {
            this.batch = batch;
            this.records = records;
        }
    }

    private final KeyGroupRange slice;
    private final List<List<Part>> partsPerKeyGroup;
    private final RecordCursor cursor = new RecordCursor();

    private int count;
    private long[] checkpointOf = new long[1024];
    private int[] partOf = new int[1024];
    private int[] offsetOf = new int[1024];
    private int[] order = new int[1024];
    /** The distinct checkpoint ids of the key group, ascending. */
    private long[] checkpoints = new long[16];
    private int[] perCheckpoint = new int[16];

    SliceRecords(KeyGroupRange slice) {
        this.slice = slice;
        this.partsPerKeyGroup = new ArrayList<>(slice.getNumberOfKeyGroups());
        for (int i = 0; i < slice.getNumberOfKeyGroups(); i++) {
            partsPerKeyGroup.add(new ArrayList<>());
        }
    }

    /** Adds the records of {@code keyGroup} read from {@code batch}; they are kept, not copied. */
    void add(Batch batch, int keyGroup, KeyGroupRecords records) {
        partsOf(keyGroup).add(new Part(batch, records));
    }

    /** Visits the records of {@code keyGroup} newest first, then lets go of them. */
    void visitNewestFirst(int keyGroup, Visitor visitor) throws IOException {
        List<Part> parts = partsOf(keyGroup);
        collect(parts);
        int distinct = distinctCheckpoints();
        sort(distinct);
        for (int i = count - 1; i >= 0; i--) {
            int record = order[i];
            Part part = parts.get(partOf[record]);
            cursor.reset(part.records, offsetOf[record]).next();
            visitor.accept(part.batch, cursor);
        }
        parts.clear();
        count = 0;
    }

    private List<Part> partsOf(int keyGroup) {
        return partsPerKeyGroup.get(keyGroup - slice.getStartKeyGroup());
    }

    private void collect(List<Part> parts) throws IOException {
        for (int p = 0; p < parts.size(); p++) {
            cursor.reset(parts.get(p).records);
            while (cursor.next()) {
                if (count == partOf.length) {
                    grow(count * 2);
                }
                checkpointOf[count] = cursor.checkpointId();
                partOf[count] = p;
                offsetOf[count] = cursor.offset();
                count++;
            }
        }
    }

    private void grow(int capacity) {
        checkpointOf = Arrays.copyOf(checkpointOf, capacity);
        partOf = Arrays.copyOf(partOf, capacity);
        offsetOf = Arrays.copyOf(offsetOf, capacity);
        order = new int[capacity];
    }

    /** Fills {@link #checkpoints} with the distinct checkpoint ids; returns how many. */
    private int distinctCheckpoints() {
        int distinct = 0;
        long last = Long.MIN_VALUE;
        for (int r = 0; r < count; r++) {
            long id = checkpointOf[r];
            // Records of one batch mostly share their checkpoint id.
            if (id == last) {
                continue;
            }
            last = id;
            int at = Arrays.binarySearch(checkpoints, 0, distinct, id);
            if (at < 0) {
                at = -at - 1;
                if (distinct == checkpoints.length) {
                    checkpoints = Arrays.copyOf(checkpoints, distinct * 2);
                }
                System.arraycopy(checkpoints, at, checkpoints, at + 1, distinct - at);
                checkpoints[at] = id;
                distinct++;
            }
        }
        return distinct;
    }

    /** Counting sort of the records by checkpoint id into {@link #order}; stable. */
    private void sort(int distinct) {
        if (perCheckpoint.length < distinct + 1) {
            perCheckpoint = new int[checkpoints.length + 1];
        }
        Arrays.fill(perCheckpoint, 0, distinct + 1, 0);
        for (int r = 0; r < count; r++) {
            perCheckpoint[rank(checkpointOf[r], distinct) + 1]++;
        }
        for (int c = 1; c <= distinct; c++) {
            perCheckpoint[c] += perCheckpoint[c - 1];
        }
        for (int r = 0; r < count; r++) {
            order[perCheckpoint[rank(checkpointOf[r], distinct)]++] = r;
        }
    }

    private int rank(long checkpointId, int distinct) {
        return Arrays.binarySearch(checkpoints, 0, distinct, checkpointId);
    }
}
