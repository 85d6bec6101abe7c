package org.appendlog.statebackend.log;

import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;

import java.io.IOException;
import java.util.List;

/**
 * The records of one batch, kept per key group so that the batch is written sorted by key group
 * and its footer can point at each group.
 */
public final class BatchBuilder {

    private final long checkpointId;
    private final KeyGroupRange keyGroups;
    private final List<String> stateNames;
    private final DataOutputSerializer[] perKeyGroup;
    private long recordCount;
    private long minCheckpointId = Long.MAX_VALUE;

    public BatchBuilder(long checkpointId, KeyGroupRange keyGroups, List<String> stateNames) {
        this.checkpointId = checkpointId;
        this.keyGroups = keyGroups;
        this.stateNames = stateNames;
        this.perKeyGroup = new DataOutputSerializer[keyGroups.getNumberOfKeyGroups()];
    }

    /**
     * Adds one record of key group {@code keyGroup} (a null {@code value}: a tombstone); returns
     * its encoded length.
     */
    public int add(
            int keyGroup,
            long recordCheckpointId,
            int stateId,
            byte[] keyNs,
            int keyNsOffset,
            int keyNsLength,
            byte[] value,
            int valueOffset,
            int valueLength)
            throws IOException {
        recordCount++;
        minCheckpointId = Math.min(minCheckpointId, recordCheckpointId);
        return LogRecord.write(
                out(keyGroup),
                recordCheckpointId,
                stateId,
                keyNs,
                keyNsOffset,
                keyNsLength,
                value,
                valueOffset,
                valueLength);
    }

    /** Appends all records of {@code other} (same key groups), after the ones added so far. */
    public void appendAll(BatchBuilder other) throws IOException {
        for (int i = 0; i < perKeyGroup.length; i++) {
            DataOutputSerializer data = other.perKeyGroup[i];
            if (data != null) {
                out(keyGroups.getStartKeyGroup() + i)
                        .write(data.getSharedBuffer(), 0, data.length());
            }
        }
        recordCount += other.recordCount;
        minCheckpointId = Math.min(minCheckpointId, other.minCheckpointId);
    }

    private DataOutputSerializer out(int keyGroup) {
        int i = keyGroup - keyGroups.getStartKeyGroup();
        DataOutputSerializer out = perKeyGroup[i];
        if (out == null) {
            out = new DataOutputSerializer(256);
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

    /** Visits every record, key group by key group, in the order they will be in the batch. */
    public void forEachRecord(LogRecord.EncodedVisitor visitor) throws IOException {
        for (int i = 0; i < perKeyGroup.length; i++) {
            DataOutputSerializer data = perKeyGroup[i];
            if (data != null) {
                LogRecord.forEach(
                        keyGroups.getStartKeyGroup() + i,
                        data.getSharedBuffer(),
                        data.length(),
                        visitor);
            }
        }
    }

    /** The encoded records of a key group, or null if it has none. */
    DataOutputSerializer keyGroupData(int keyGroup) {
        return perKeyGroup[keyGroup - keyGroups.getStartKeyGroup()];
    }
}
