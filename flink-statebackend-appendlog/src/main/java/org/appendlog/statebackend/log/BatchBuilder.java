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

package org.appendlog.statebackend.log;

import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.List;

/**
 * The records of one batch, kept per key group so that the batch is written sorted by key group
 * and its footer can point at each group.
 */
public final class BatchBuilder implements RecordFormat.Target {

    private final long checkpointId;
    private final KeyGroupRange keyGroups;
    private final List<String> stateNames;
    private final DataOutputSerializer[] perKeyGroup;
    private final int[] recordsPerKeyGroup;
    @Nullable private final int[] expectedBytes;
    private long recordCount;
    private long minCheckpointId = Long.MAX_VALUE;

    public BatchBuilder(long checkpointId, KeyGroupRange keyGroups, List<String> stateNames) {
        this(checkpointId, keyGroups, stateNames, null);
    }

    /**
     * @param expectedBytes per key group, how many bytes its records will probably take (those of
     *     an earlier batch, see {@link #keyGroupBytes}), or null for no guess: a key group's buffer
     *     starts at about that size instead of doubling its way there, copying everything each time
     */
    public BatchBuilder(
            long checkpointId,
            KeyGroupRange keyGroups,
            List<String> stateNames,
            @Nullable int[] expectedBytes) {
        this.checkpointId = checkpointId;
        this.keyGroups = keyGroups;
        this.stateNames = stateNames;
        this.perKeyGroup = new DataOutputSerializer[keyGroups.getNumberOfKeyGroups()];
        this.recordsPerKeyGroup = new int[perKeyGroup.length];
        this.expectedBytes =
                expectedBytes != null && expectedBytes.length == perKeyGroup.length
                        ? expectedBytes
                        : null;
    }

    /**
     * Counts a record of {@code keyGroup} written by checkpoint {@code recordCheckpointId}, which
     * {@link RecordFormat#write} appends to the returned buffer.
     */
    @Override
    public DataOutputSerializer next(int keyGroup, long recordCheckpointId) {
        recordCount++;
        recordsPerKeyGroup[keyGroup - keyGroups.getStartKeyGroup()]++;
        minCheckpointId = Math.min(minCheckpointId, recordCheckpointId);
        return out(keyGroup);
    }

    /** Where the next record added to {@code keyGroup} will start among the group's bytes. */
    public int nextPosition(int keyGroup) {
        DataOutputSerializer data = perKeyGroup[keyGroup - keyGroups.getStartKeyGroup()];
        return data == null ? 0 : data.length();
    }

    /** Appends all records of {@code other} (same key groups), after the ones added so far. */
    public void appendAll(BatchBuilder other) throws IOException {
        append(other, false);
    }

    /**
     * Moves all records of {@code other} (same key groups) after the ones added so far; {@code
     * other} must not be used afterwards. A key group that has no records here takes over {@code
     * other}'s buffer instead of copying it: compaction's slices, which own disjoint key groups,
     * become one run without copying the run.
     */
    public void takeAll(BatchBuilder other) throws IOException {
        append(other, true);
    }

    private void append(BatchBuilder other, boolean takeBuffers) throws IOException {
        for (int i = 0; i < perKeyGroup.length; i++) {
            DataOutputSerializer data = other.perKeyGroup[i];
            if (data == null) {
                continue;
            }
            if (takeBuffers && perKeyGroup[i] == null) {
                perKeyGroup[i] = data;
                other.perKeyGroup[i] = null;
            } else {
                out(keyGroups.getStartKeyGroup() + i)
                        .write(data.getSharedBuffer(), 0, data.length());
            }
            recordsPerKeyGroup[i] += other.recordsPerKeyGroup[i];
        }
        recordCount += other.recordCount;
        minCheckpointId = Math.min(minCheckpointId, other.minCheckpointId);
    }

    private DataOutputSerializer out(int keyGroup) {
        int i = keyGroup - keyGroups.getStartKeyGroup();
        DataOutputSerializer out = perKeyGroup[i];
        if (out == null) {
            int expected = expectedBytes == null ? 0 : expectedBytes[i];
            out = new DataOutputSerializer(Math.max(256, expected + expected / 8));
            perKeyGroup[i] = out;
        }
        return out;
    }

    public long checkpointId() {
        return checkpointId;
    }

    public KeyGroupRange keyGroups() {
        return keyGroups;
    }

    public List<String> stateNames() {
        return stateNames;
    }

    public long recordCount() {
        return recordCount;
    }

    /** The oldest checkpoint id among the records; a compacted run holds records of many. */
    public long minCheckpointId() {
        return recordCount == 0 ? checkpointId : minCheckpointId;
    }

    public int recordCount(int keyGroup) {
        return recordsPerKeyGroup[keyGroup - keyGroups.getStartKeyGroup()];
    }

    /** Visits every record, key group by key group, in the order they will be in the batch. */
    public void forEachRecord(RecordFormat.EncodedVisitor visitor) throws IOException {
        for (int keyGroup : keyGroups) {
            forEachRecord(keyGroup, visitor);
        }
    }

    /** Visits the records of one key group, in the order they will be in the batch. */
    public void forEachRecord(int keyGroup, RecordFormat.EncodedVisitor visitor) throws IOException {
        DataOutputSerializer data = keyGroupData(keyGroup);
        if (data != null) {
            RecordFormat.forEach(keyGroup, data.getSharedBuffer(), data.length(), visitor);
        }
    }

    /** The bytes of each key group's records, in key group order. */
    public int[] keyGroupBytes() {
        int[] bytes = new int[perKeyGroup.length];
        for (int i = 0; i < bytes.length; i++) {
            bytes[i] = perKeyGroup[i] == null ? 0 : perKeyGroup[i].length();
        }
        return bytes;
    }

    /** The encoded records of a key group, or null if it has none. */
    DataOutputSerializer keyGroupData(int keyGroup) {
        return perKeyGroup[keyGroup - keyGroups.getStartKeyGroup()];
    }
}
