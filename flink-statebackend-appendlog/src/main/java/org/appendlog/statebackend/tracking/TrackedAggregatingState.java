package org.appendlog.statebackend.tracking;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.runtime.state.StateTransformationFunction;
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

    @Override
    @SuppressWarnings("unchecked")
    protected StateTransformationFunction<ACC, IN> mergeOf(StateDescriptor<?, ?> descriptor) {
        AggregateFunction<IN, ACC, OUT> function =
                ((AggregatingStateDescriptor<IN, ACC, OUT>) descriptor).getAggregateFunction();
        return (accumulator, value) ->
                function.add(value, accumulator == null ? function.createAccumulator() : accumulator);
    }
}
