package org.appendlog.statebackend.tracking;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.StateEntry;
import org.apache.flink.runtime.state.internal.InternalKvState;

import java.util.Collection;

/**
 * A heap state that reports every write to the {@link ChangeTracker}. Reads go straight to the
 * heap state; subclasses add the writes of each state kind.
 */
abstract class TrackedKvState<K, N, V, S extends InternalKvState<K, N, V>>
        implements InternalKvState<K, N, V> {

    protected S delegate;
    private final int stateId;
    private final ChangeTracker tracker;
    private final InternalKeyContext<K> keyContext;
    protected N currentNamespace;
    private boolean stamped;

    TrackedKvState(S delegate, int stateId, ChangeTracker tracker, InternalKeyContext<K> keyContext) {
        this.delegate = delegate;
        this.stateId = stateId;
        this.tracker = tracker;
        this.keyContext = keyContext;
    }

    /** Marks the current entry: it was removed, or may have changed in place. */
    protected final void markDirty() {
        tracker.markCurrentKey(stateId, currentNamespace);
    }

    protected final void markDirty(N namespace) {
        tracker.markCurrentKey(stateId, namespace);
    }

    /**
     * The current entry was written through the heap table. A stamped state needs no mark: the
     * table's version stamp on the entry tells the checkpoint.
     */
    protected final void markWritten() {
        if (!stamped) {
            markDirty();
        }
    }

    protected final void markWritten(N namespace) {
        if (!stamped) {
            markDirty(namespace);
        }
    }

    /**
     * Whether checkpoints find this state's writes by the heap table's version stamps (see {@link
     * LoggedState#isStamped()}) rather than by marks.
     */
    void setStamped(boolean stamped) {
        this.stamped = stamped;
    }

    @Override
    public void setCurrentNamespace(N namespace) {
        delegate.setCurrentNamespace(namespace);
        currentNamespace = namespace;
    }

    @Override
    public void clear() {
        delegate.clear();
        markDirty();
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
                markEntry(entry);
            }

            @Override
            public void update(StateEntry<K, N, V> entry, V newValue) {
                visitor.update(entry, newValue);
                markEntry(entry);
            }
        };
    }

    private void markEntry(StateEntry<K, N, V> entry) {
        K key = entry.getKey();
        tracker.mark(
                new EntryRef(
                        stateId,
                        key,
                        entry.getNamespace(),
                        org.apache.flink.runtime.state.KeyGroupRangeAssignment.assignToKeyGroup(
                                key, keyContext.getNumberOfKeyGroups())));
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
