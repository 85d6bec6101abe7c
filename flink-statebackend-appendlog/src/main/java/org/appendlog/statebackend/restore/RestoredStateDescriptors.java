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

package org.appendlog.statebackend.restore;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.ReduceFunction;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.ListSerializer;
import org.apache.flink.api.common.typeutils.base.MapSerializer;
import org.apache.flink.runtime.state.RegisteredKeyValueStateBackendMetaInfo;

/**
 * Descriptors that register a restored state with the heap backend before the job registers it
 * itself (states must exist to receive the log's records). They carry the restored serializers;
 * reduce and aggregate functions are placeholders until the job's own registration replaces them.
 */
public final class RestoredStateDescriptors {

    private RestoredStateDescriptors() {}

    @SuppressWarnings({"unchecked", "rawtypes"})
    public static StateDescriptor<?, ?> of(RegisteredKeyValueStateBackendMetaInfo<?, ?> meta) {
        String name = meta.getName();
        switch (meta.getStateType()) {
            case VALUE:
                return new ValueStateDescriptor(name, meta.getStateSerializer());
            case LIST:
                return new ListStateDescriptor(
                        name, ((ListSerializer) meta.getStateSerializer()).getElementSerializer());
            case MAP:
                MapSerializer map = (MapSerializer) meta.getStateSerializer();
                return new MapStateDescriptor(
                        name, map.getKeySerializer(), map.getValueSerializer());
            case REDUCING:
                return new ReducingStateDescriptor(
                        name, new NotYetRegisteredReduce(name), meta.getStateSerializer());
            case AGGREGATING:
                return new AggregatingStateDescriptor(
                        name, new NotYetRegisteredAggregate(name), meta.getStateSerializer());
            default:
                throw new IllegalStateException(
                        "Cannot restore state '" + name + "' of type " + meta.getStateType());
        }
    }

    private static IllegalStateException notRegistered(String state) {
        return new IllegalStateException(
                "State '" + state + "' was restored but the job has not registered it yet");
    }

    private static final class NotYetRegisteredReduce implements ReduceFunction<Object> {
        private static final long serialVersionUID = 1L;
        private final String state;

        NotYetRegisteredReduce(String state) {
            this.state = state;
        }

        @Override
        public Object reduce(Object a, Object b) {
            throw notRegistered(state);
        }
    }

    private static final class NotYetRegisteredAggregate
            implements AggregateFunction<Object, Object, Object> {
        private static final long serialVersionUID = 1L;
        private final String state;

        NotYetRegisteredAggregate(String state) {
            this.state = state;
        }

        @Override
        public Object createAccumulator() {
            throw notRegistered(state);
        }

        @Override
        public Object add(Object value, Object accumulator) {
            throw notRegistered(state);
        }

        @Override
        public Object getResult(Object accumulator) {
            throw notRegistered(state);
        }

        @Override
        public Object merge(Object a, Object b) {
            throw notRegistered(state);
        }
    }
}
