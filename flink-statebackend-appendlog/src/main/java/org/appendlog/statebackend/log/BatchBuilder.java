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

    public BatchBuilder(long checkpointId, KeyGroupRange keyGroups, List<String> stateNames) {
        this.checkpointId = checkpointId;
        this.keyGroups = keyGroups;
        this.stateNames = stateNames;
        this.perKeyGroup = new DataOutputSerializer[keyGroups.getNumberOfKeyGroups()];
    }

    /** Adds one record of key group {@code keyGroup}; returns its encoded length. */
    public int add(
            int keyGroup,
            long recordCheckpointId,
            int stateId,
            byte[] keyNs,
            int keyNsLength,
            byte[] value,
            int valueLength)
            throws IOException {
        recordCount++;
        return LogRecord.write(
                out(keyGroup),
                recordCheckpointId,
                stateId,
                keyNs,
                keyNsLength,
                value,
                valueLength);
    }

    /**
     * Adds already encoded records (copied from another batch) of one key group; their count is
     * added with {@link #countRecords}.
     */
    public void addEncoded(int keyGroup, byte[] records, int offset, int length)
            throws IOException {
        out(keyGroup).write(records, offset, length);
    }

    public void countRecords(long count) {
        recordCount += count;
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

    /** The encoded records of a key group, or null if it has none. */
    public DataOutputSerializer keyGroupData(int keyGroup) {
        return perKeyGroup[keyGroup - keyGroups.getStartKeyGroup()];
    }
}
