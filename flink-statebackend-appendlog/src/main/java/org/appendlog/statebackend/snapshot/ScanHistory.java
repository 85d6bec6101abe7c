package org.appendlog.statebackend.snapshot;

import org.apache.flink.runtime.state.heap.StateTable;

import javax.annotation.Nullable;

import java.util.Map;
import java.util.TreeMap;

/**
 * For one stamped state: the map versions, per key group, at which its successful change scans
 * were taken, by checkpoint id. A scan for checkpoint {@code c} writes the entries stamped since
 * the latest successful scan of an <em>earlier</em> checkpoint, so a scan that failed or never ran
 * is covered by the next one, and a later checkpoint's scan never narrows an earlier one's.
 */
final class ScanHistory {

    private static final class Versions {
        final StateTable<?, ?, ?> table;
        final int[] versions;

        Versions(StateTable<?, ?, ?> table, int[] versions) {
            this.table = table;
            this.versions = versions;
        }
    }

    private final TreeMap<Long, Versions> succeeded = new TreeMap<>();

    /**
     * The versions per key group from which the scan of {@code checkpointId} over {@code table}
     * must write entries, or null for all entries (no earlier scan of this table).
     */
    @Nullable
    synchronized int[] since(long checkpointId, StateTable<?, ?, ?> table) {
        Map.Entry<Long, Versions> earlier = succeeded.lowerEntry(checkpointId);
        return earlier == null || earlier.getValue().table != table
                ? null
                : earlier.getValue().versions;
    }

    synchronized void succeeded(long checkpointId, StateTable<?, ?, ?> table, int[] versions) {
        succeeded.put(checkpointId, new Versions(table, versions));
    }

    /** No scan for a checkpoint after {@code completedCheckpointId} needs older versions. */
    synchronized void completed(long completedCheckpointId) {
        Long floor = succeeded.floorKey(completedCheckpointId);
        if (floor != null) {
            succeeded.headMap(floor, false).clear();
        }
    }
}
