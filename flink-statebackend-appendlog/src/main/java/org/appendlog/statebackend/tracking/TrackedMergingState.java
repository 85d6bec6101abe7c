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
import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.StateTransformationFunction;
import org.apache.flink.runtime.state.heap.StateTable;
import org.apache.flink.runtime.state.internal.InternalMergingState;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.Collection;

/** Appending and merging writes, shared by list, reducing and aggregating state. */
abstract class TrackedMergingState<K, N, IN, SV, OUT, S extends InternalMergingState<K, N, IN, SV, OUT>>
        extends TrackedKvState<K, N, SV, S> implements InternalMergingState<K, N, IN, SV, OUT> {

    private StateTable<K, N, SV> table;
    /** The heap state's merge of an added value; null if this kind's values are never logged. */
    @Nullable private StateTransformationFunction<SV, IN> merge;
    /** What {@link #merge} returned inside the table's lookup. */
    private SV merged;
    private final StateTransformationFunction<SV, IN> remembered =
            (current, value) -> merged = merge.apply(current, value);

    TrackedMergingState(
            S delegate, int stateId, ChangeTracker tracker, InternalKeyContext<K> keyContext) {
        super(delegate, stateId, tracker, keyContext);
    }

    @Override
    void follow(StateTable<K, N, SV> table, StateDescriptor<?, ?> descriptor) {
        super.follow(table, descriptor);
        this.table = table;
        this.merge = mergeOf(descriptor);
    }

    /**
     * How the heap state merges an added value into the entry's current one (null: none yet),
     * from the state's descriptor; null if this kind's values are never logged.
     */
    @Nullable
    protected StateTransformationFunction<SV, IN> mergeOf(StateDescriptor<?, ?> descriptor) {
        return null;
    }

    @Override
    public OUT get() throws Exception {
        return delegate.get();
    }

    @Override
    public void add(IN value) throws Exception {
        if (merge == null || value == null || !logsValues()) {
            delegate.add(value);
            changed(currentNamespace);
            return;
        }
        // Merged through the table as the heap state merges, so that the value to log comes out
        // of the same lookup: reading it back took a second one for every record.
        try {
            table.transform(currentNamespace, value, remembered);
        } catch (Exception e) {
            throw new IOException(
                    "Exception while merging a value into state '"
                            + table.getMetaInfo().getName() + "'",
                    e);
        }
        SV result = merged;
        merged = null;
        written(currentNamespace, result);
    }

    @Override
    public SV getInternal() throws Exception {
        return delegate.getInternal();
    }

    @Override
    public void updateInternal(SV valueToStore) throws Exception {
        delegate.updateInternal(valueToStore);
        written(currentNamespace, valueToStore);
    }

    @Override
    public void mergeNamespaces(N target, Collection<N> sources) throws Exception {
        delegate.mergeNamespaces(target, sources);
        changed(target);
        for (N source : sources) {
            written(source, null);
        }
    }

    /** The entry under {@code namespace} changed inside the heap state: log what it holds now. */
    private void changed(N namespace) throws Exception {
        if (!logsValues()) {
            // marked, or nothing while the tracker is paused: no need to read the value
            written(namespace, null);
            return;
        }
        N current = currentNamespace;
        if (namespace == current) {
            written(namespace, delegate.getInternal());
            return;
        }
        delegate.setCurrentNamespace(namespace);
        try {
            written(namespace, delegate.getInternal());
        } finally {
            if (current != null) {
                delegate.setCurrentNamespace(current);
            }
        }
    }
}
