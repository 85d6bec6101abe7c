package org.appendlog.statebackend.tracking;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;

/** A priority queue state (timers); written in full with every checkpoint. */
public final class LoggedTimers {

    private final String name;
    private final KeyGroupedInternalPriorityQueue<?> queue;
    private TypeSerializer<?> elementSerializer;

    public LoggedTimers(
            String name, KeyGroupedInternalPriorityQueue<?> queue, TypeSerializer<?> serializer) {
        this.name = name;
        this.queue = queue;
        this.elementSerializer = serializer;
    }

    public String name() {
        return name;
    }

    public KeyGroupedInternalPriorityQueue<?> queue() {
        return queue;
    }

    public TypeSerializer<?> elementSerializer() {
        return elementSerializer;
    }

    public void updateSerializer(TypeSerializer<?> serializer) {
        this.elementSerializer = serializer;
    }
}
