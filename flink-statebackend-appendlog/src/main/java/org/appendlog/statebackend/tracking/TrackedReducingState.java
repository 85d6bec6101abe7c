package org.appendlog.statebackend.tracking;

import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.runtime.state.StateTransformationFunction;
import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.internal.InternalReducingState;

final class TrackedReducingState<K, N, V>
        extends TrackedMergingState<K, N, V, V, V, InternalReducingState<K, N, V>>
        implements InternalReducingState<K, N, V> {

    TrackedReducingState(
            InternalReducingState<K, N, V> delegate,
            int stateId,
            ChangeTracker tracker,
            InternalKeyContext<K> keyContext) {
        super(delegate, stateId, tracker, keyContext);
    }

    @Override
    @SuppressWarnings("unchecked")
    protected StateTransformationFunction<V, V> mergeOf(StateDescriptor<?, ?> descriptor) {
        ReduceFunction<V> function = ((ReducingStateDescriptor<V>) descriptor).getReduceFunction();
        return (current, value) -> current == null ? value : function.reduce(current, value);
    }
}
