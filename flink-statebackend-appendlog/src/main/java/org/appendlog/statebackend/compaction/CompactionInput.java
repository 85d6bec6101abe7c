package org.appendlog.statebackend.compaction;

import org.appendlog.statebackend.log.BatchLocation;

import org.apache.flink.api.common.typeutils.TypeSerializer;

import java.util.List;
import java.util.Map;

/**
 * What a compaction pass needs from the task thread, taken there at one moment: the batches the
 * current checkpoint consists of, and serializers (duplicated, so the pass may use them on its
 * own thread) to tell entries apart.
 */
public final class CompactionInput {

    final List<BatchLocation> batches;
    final TypeSerializer<Object> keySerializer;
    /** Per state name: its id in this backend. */
    final Map<String, Integer> stateIds;
    /** Per state name: its namespace serializer. */
    final Map<String, TypeSerializer<Object>> namespaceSerializers;
    /** State names by id: the run's state table. */
    final List<String> stateNames;

    public CompactionInput(
            List<BatchLocation> batches,
            TypeSerializer<Object> keySerializer,
            Map<String, Integer> stateIds,
            Map<String, TypeSerializer<Object>> namespaceSerializers,
            List<String> stateNames) {
        this.batches = batches;
        this.keySerializer = keySerializer;
        this.stateIds = stateIds;
        this.namespaceSerializers = namespaceSerializers;
        this.stateNames = stateNames;
    }
}
