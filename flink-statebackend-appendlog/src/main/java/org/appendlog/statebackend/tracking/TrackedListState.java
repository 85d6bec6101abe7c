package org.appendlog.statebackend.tracking;

import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.internal.InternalListState;

import java.util.List;

final class TrackedListState<K, N, V>
        extends TrackedMergingState<K, N, V, List<V>, Iterable<V>, InternalListState<K, N, V>>
        implements InternalListState<K, N, V> {

    TrackedListState(
            InternalListState<K, N, V> delegate,
            int stateId,
            ChangeTracker tracker,
            InternalKeyContext<K> keyContext) {
        super(delegate, stateId, tracker, keyContext);
    }

    @Override
    public void update(List<V> values) throws Exception {
        delegate.update(values);
        markDirty();
    }

    @Override
    public void addAll(List<V> values) throws Exception {
        delegate.addAll(values);
        markDirty();
    }
}
