package org.appendlog.statebackend.tracking;

import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;

final class TrackedAggregatingState<K, N, IN, ACC, OUT>
        extends TrackedMergingState<
                K, N, IN, ACC, OUT, InternalAggregatingState<K, N, IN, ACC, OUT>>
        implements InternalAggregatingState<K, N, IN, ACC, OUT> {

    TrackedAggregatingState(
            InternalAggregatingState<K, N, IN, ACC, OUT> delegate,
            int stateId,
            ChangeTracker tracker,
            InternalKeyContext<K> keyContext) {
        super(delegate, stateId, tracker, keyContext);
    }
}
