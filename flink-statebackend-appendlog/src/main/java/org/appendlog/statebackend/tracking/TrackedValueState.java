package org.appendlog.statebackend.tracking;

import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.internal.InternalValueState;

import java.io.IOException;

final class TrackedValueState<K, N, V> extends TrackedKvState<K, N, V, InternalValueState<K, N, V>>
        implements InternalValueState<K, N, V> {

    TrackedValueState(
            InternalValueState<K, N, V> delegate,
            int stateId,
            ChangeTracker tracker,
            InternalKeyContext<K> keyContext) {
        super(delegate, stateId, tracker, keyContext);
    }

    @Override
    public V value() throws IOException {
        return delegate.value();
    }

    @Override
    public void update(V value) throws IOException {
        delegate.update(value);
        written(currentNamespace, value);
    }
}
