package org.appendlog.statebackend.snapshot;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.IterableStateSnapshot;

/**
 * A copy-on-write snapshot of one state table with serializers of its own, so that a full batch
 * can be written in the asynchronous phase while the task keeps changing the table.
 */
final class StateTableSnapshot {

    final int stateId;
    final IterableStateSnapshot<Object, Object, Object> snapshot;
    final TypeSerializer<Object> keySerializer;
    final TypeSerializer<Object> namespaceSerializer;
    final TypeSerializer<Object> valueSerializer;

    StateTableSnapshot(
            int stateId,
            IterableStateSnapshot<Object, Object, Object> snapshot,
            TypeSerializer<Object> keySerializer,
            TypeSerializer<Object> namespaceSerializer,
            TypeSerializer<Object> valueSerializer) {
        this.stateId = stateId;
        this.snapshot = snapshot;
        this.keySerializer = keySerializer;
        this.namespaceSerializer = namespaceSerializer;
        this.valueSerializer = valueSerializer;
    }

    void release() {
        snapshot.release();
    }
}
