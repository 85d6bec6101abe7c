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
