package org.appendlog.statebackend.snapshot;

import org.apache.flink.runtime.state.IterableStateSnapshot;

/**
 * A copy-on-write snapshot of one state table with serializers of its own, so that a full batch
 * can be written in the asynchronous phase while the task keeps changing the table.
 */
final class StateTableSnapshot {

    final int stateId;
    final IterableStateSnapshot<Object, Object, Object> snapshot;
    final Capture.Serializers serializers;

    StateTableSnapshot(
            int stateId,
            IterableStateSnapshot<Object, Object, Object> snapshot,
            Capture.Serializers serializers) {
        this.stateId = stateId;
        this.snapshot = snapshot;
        this.serializers = serializers;
    }

    void release() {
        snapshot.release();
    }
}
