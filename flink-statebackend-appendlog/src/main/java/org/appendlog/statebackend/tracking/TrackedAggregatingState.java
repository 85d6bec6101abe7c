/*
 * Copyright AppendLog contributors.
 *
 * Licensed under the Apache License, Version 2.0 (the "License");
 * you may not use this file except in compliance with the License.
 * You may obtain a copy of the License at
 *
 *     http://www.apache.org/licenses/LICENSE-2.0
 *
 * Unless required by applicable law or agreed to in writing, software
 * distributed under the License is distributed on an "AS IS" BASIS,
 * WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
 * See the License for the specific language governing permissions and
 * limitations under the License.
 */

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
