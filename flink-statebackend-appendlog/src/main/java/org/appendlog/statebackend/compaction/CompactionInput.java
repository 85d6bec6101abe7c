package org.appendlog.statebackend.compaction;

import org.appendlog.statebackend.log.BatchLocation;

import java.util.List;
import java.util.Map;

/**
 * What a compaction pass needs from the task thread, taken there at one moment: the batches the
 * current checkpoint consists of, and the states' ids. Entries are told apart by their
 * serialized key and namespace, so the pass needs no serializer.
 */
public final class CompactionInput {

    final List<BatchLocation> batches;
    /** Per state name: its id in this backend. */
    final Map<String, Integer> stateIds;
    /** State names by id: the run's state table. */
    final List<String> stateNames;

    public CompactionInput(
            List<BatchLocation> batches, Map<String, Integer> stateIds, List<String> stateNames) {
        this.batches = batches;
        this.stateIds = stateIds;
        this.stateNames = stateNames;
    }
}
