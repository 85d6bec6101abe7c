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

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.runtime.state.heap.AbstractHeapState;
import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.heap.StateTable;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.internal.InternalListState;
import org.apache.flink.runtime.state.internal.InternalMapState;
import org.apache.flink.runtime.state.internal.InternalReducingState;
import org.apache.flink.runtime.state.internal.InternalValueState;

/**
 * One keyed state of the backend: its id in the log, the heap table that holds it, and the
 * tracked view that the task writes through.
 */
public final class LoggedState<K> {

    private final int id;
    private final String name;
    private final TrackedKvState<K, Object, Object, ?> tracked;
    private StateTable<K, Object, Object> table;

    private LoggedState(int id, String name, TrackedKvState<K, Object, Object, ?> tracked) {
        this.id = id;
        this.name = name;
        this.tracked = tracked;
    }

    /** Wraps a state of the heap backend so that its writes reach {@code tracker}. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <K> LoggedState<K> track(
            int id,
            StateDescriptor<?, ?> descriptor,
            InternalKvState<K, ?, ?> heapState,
            ChangeTracker tracker,
            InternalKeyContext<K> keyContext) {
        TrackedKvState tracked;
        switch (descriptor.getType()) {
            case VALUE:
                tracked = new TrackedValueState((InternalValueState) heapState, id, tracker, keyContext);
                break;
            case LIST:
                tracked = new TrackedListState((InternalListState) heapState, id, tracker, keyContext);
                break;
            case MAP:
                tracked = new TrackedMapState((InternalMapState) heapState, id, tracker, keyContext);
                break;
            case REDUCING:
                tracked =
                        new TrackedReducingState(
                                (InternalReducingState) heapState, id, tracker, keyContext);
                break;
            case AGGREGATING:
                tracked =
                        new TrackedAggregatingState(
                                (InternalAggregatingState) heapState, id, tracker, keyContext);
                break;
            default:
                throw new UnsupportedOperationException(
                        "The appendlog state backend does not support "
                                + descriptor.getType()
                                + " state");
        }
        StateTable<K, Object, Object> table = tableOf(heapState);
        LoggedState<K> state = new LoggedState<>(id, table.getMetaInfo().getName(), tracked);
        state.follow(table, descriptor);
        return state;
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private void follow(StateTable<K, Object, Object> table, StateDescriptor<?, ?> descriptor) {
        this.table = table;
        tracked.follow((StateTable) table, descriptor);
    }

    @SuppressWarnings("unchecked")
    private static <K> StateTable<K, Object, Object> tableOf(InternalKvState<K, ?, ?> heapState) {
        return ((AbstractHeapState<K, Object, Object>) heapState).getStateTable();
    }

    /**
     * The state was registered again, with new serializers or functions. Changes logged or marked
     * before stay valid either way: a mark is looked up at the barrier, so its record follows
     * every logged one in the checkpoint.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public void update(InternalKvState<K, ?, ?> heapState, StateDescriptor<?, ?> descriptor) {
        tracked.replaceDelegate((InternalKvState) heapState);
        follow(tableOf(heapState), descriptor);
    }

    public int id() {
        return id;
    }

    public String name() {
        return name;
    }

    public InternalKvState<K, ?, ?> tracked() {
        return tracked;
    }

    public StateTable<K, Object, Object> table() {
        return table;
    }
}
