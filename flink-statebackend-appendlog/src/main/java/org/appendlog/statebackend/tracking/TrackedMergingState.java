package org.appendlog.statebackend.tracking;

import org.apache.flink.runtime.state.InternalKeyContext;
import org.apache.flink.runtime.state.internal.InternalMergingState;

import java.util.Collection;

/** Appending and merging writes, shared by list, reducing and aggregating state. */
abstract class TrackedMergingState<K, N, IN, SV, OUT, S extends InternalMergingState<K, N, IN, SV, OUT>>
        extends TrackedKvState<K, N, SV, S> implements InternalMergingState<K, N, IN, SV, OUT> {

    TrackedMergingState(
            S delegate, int stateId, ChangeTracker tracker, InternalKeyContext<K> keyContext) {
        super(delegate, stateId, tracker, keyContext);
    }

    @Override
    public OUT get() throws Exception {
        return delegate.get();
    }

    @Override
    public void add(IN value) throws Exception {
        delegate.add(value);
        changed(currentNamespace);
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
        if (!isLogged()) {
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
