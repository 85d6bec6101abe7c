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
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.StateEntry;
import org.apache.flink.runtime.state.internal.InternalKvState;
import org.apache.flink.runtime.state.heap.AbstractHeapState;
import org.apache.flink.runtime.state.heap.StateTable;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.Collection;

/**
 * A heap state that reports every write to the {@link ChangeTracker}. Reads go straight to the
 * heap state; subclasses add the writes of each state kind.
 */
abstract class TrackedKvState<K, N, V, S extends InternalKvState<K, N, V>>
        implements InternalKvState<K, N, V> {

    private static final Logger LOG = LoggerFactory.getLogger(TrackedKvState.class);

    protected S delegate;
    private final int stateId;
    private final ChangeTracker tracker;
    private final InternalKeyContext<K> keyContext;
    protected N currentNamespace;
    private boolean logged;
    private boolean warnedOfLogFailure;

    TrackedKvState(S delegate, int stateId, ChangeTracker tracker, InternalKeyContext<K> keyContext) {
        this.delegate = delegate;
        this.stateId = stateId;
        this.tracker = tracker;
        this.keyContext = keyContext;
    }

    /** Marks the current entry: it may have changed in place. */
    protected final void markDirty() {
        tracker.markCurrentKey(stateId, currentNamespace);
    }

    /**
     * The current key's entry under {@code namespace} now holds {@code value} (null: it was
     * removed): logged if this state's values are immutable, else marked.
     */
    protected final void written(N namespace, @Nullable Object value) {
        if (!logged
                || !log(
                        keyContext.getCurrentKey(),
                        keyContext.getCurrentKeyGroupIndex(),
                        namespace,
                        value)) {
            tracker.markCurrentKey(stateId, namespace);
        }
    }

    /** Returns false if the value could not be serialized; the heap holds it all the same. */
    private boolean log(K key, int keyGroup, N namespace, @Nullable Object value) {
        try {
            tracker.log(
                    stateId,
                    keyGroup,
                    key,
                    namespace,
                    value,
                    delegate.getKeySerializer(),
                    delegate.getNamespaceSerializer(),
                    delegate.getValueSerializer());
            return true;
        } catch (IOException | RuntimeException e) {
            // Marked instead: the checkpoint serializes it at the barrier (or fails, saying why).
            warnOnce(e);
            return false;
        }
    }

    private void warnOnce(Exception e) {
        if (!warnedOfLogFailure) {
            warnedOfLogFailure = true;
            LOG.warn(
                    "Could not serialize a write to state '{}'; its entries will be serialized at"
                            + " the next checkpoint's barrier instead (logged once per state)",
                    stateName(),
                    e);
        }
    }

    private String stateName() {
        return delegate instanceof AbstractHeapState
                ? ((AbstractHeapState<?, ?, ?>) delegate).getStateTable().getMetaInfo().getName()
                : String.valueOf(stateId);
    }

    /**
     * Whether a write now is logged with its value: the values are of an immutable type and the
     * tracker is not paused.
     */
    protected final boolean logsValues() {
        return logged && !tracker.isPaused();
    }

    /**
     * Takes what this state needs from its registration, the first one or a later one with new
     * serializers or functions: values of an immutable type are logged.
     */
    void follow(StateTable<K, N, V> table, StateDescriptor<?, ?> descriptor) {
        this.logged = table.getStateSerializer().isImmutableType();
    }

    @Override
    public void setCurrentNamespace(N namespace) {
        delegate.setCurrentNamespace(namespace);
        currentNamespace = namespace;
    }

    @Override
    public void clear() {
        delegate.clear();
        written(currentNamespace, null);
    }

    @Override
    public TypeSerializer<K> getKeySerializer() {
        return delegate.getKeySerializer();
    }

    @Override
    public TypeSerializer<N> getNamespaceSerializer() {
        return delegate.getNamespaceSerializer();
    }

    @Override
    public TypeSerializer<V> getValueSerializer() {
        return delegate.getValueSerializer();
    }

    @Override
    public byte[] getSerializedValue(
            byte[] serializedKeyAndNamespace,
            TypeSerializer<K> safeKeySerializer,
            TypeSerializer<N> safeNamespaceSerializer,
            TypeSerializer<V> safeValueSerializer)
            throws Exception {
        return delegate.getSerializedValue(
                serializedKeyAndNamespace,
                safeKeySerializer,
                safeNamespaceSerializer,
                safeValueSerializer);
    }

    /** TTL's incremental cleanup removes and rewrites entries through this visitor. */
    @Override
    public StateIncrementalVisitor<K, N, V> getStateIncrementalVisitor(int recommendedMaxRecords) {
        StateIncrementalVisitor<K, N, V> visitor =
                delegate.getStateIncrementalVisitor(recommendedMaxRecords);
        return new StateIncrementalVisitor<K, N, V>() {
            @Override
            public boolean hasNext() {
                return visitor.hasNext();
            }

            @Override
            public Collection<StateEntry<K, N, V>> nextEntries() {
                return visitor.nextEntries();
            }

            @Override
            public void remove(StateEntry<K, N, V> entry) {
                visitor.remove(entry);
                written(entry, null);
            }

            @Override
            public void update(StateEntry<K, N, V> entry, V newValue) {
                visitor.update(entry, newValue);
                written(entry, newValue);
            }
        };
    }

    private void written(StateEntry<K, N, V> entry, @Nullable V value) {
        K key = entry.getKey();
        int keyGroup =
                KeyGroupRangeAssignment.assignToKeyGroup(key, keyContext.getNumberOfKeyGroups());
        if (!logged || !log(key, keyGroup, entry.getNamespace(), value)) {
            tracker.mark(new EntryRef(stateId, key, entry.getNamespace(), keyGroup));
        }
    }

    /** After the state is registered again (new serializers or functions). */
    @SuppressWarnings("unchecked")
    void replaceDelegate(InternalKvState<K, N, ?> newDelegate) {
        this.delegate = (S) newDelegate;
        if (currentNamespace != null) {
            delegate.setCurrentNamespace(currentNamespace);
        }
    }
}
