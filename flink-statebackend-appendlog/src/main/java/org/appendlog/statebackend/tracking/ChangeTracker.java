package org.appendlog.statebackend.tracking;

import org.apache.flink.runtime.state.InternalKeyContext;

import java.util.HashSet;
import java.util.Set;

/**
 * The dirty set of the entries that a checkpoint must look up at the barrier: entries of states
 * with mutable values (changed in place, which the heap table cannot see) and removed entries of
 * every state. Writes of immutable values need no entry here: the table stamps them with its
 * version, and the checkpoint finds them by that stamp. A key written a million times between two
 * checkpoints is one entry here, and so one record in the log. Used only on the task thread.
 */
public final class ChangeTracker {

    private final InternalKeyContext<?> keyContext;
    private Set<EntryRef> dirty = new HashSet<>();
    private EntryRef lastMarked;

    public ChangeTracker(InternalKeyContext<?> keyContext) {
        this.keyContext = keyContext;
    }

    /** Marks the entry of the current key under {@code namespace} in state {@code stateId}. */
    public void markCurrentKey(int stateId, Object namespace) {
        Object key = keyContext.getCurrentKey();
        if (lastMarked == null || !lastMarked.sameAs(stateId, key, namespace)) {
            lastMarked =
                    new EntryRef(stateId, key, namespace, keyContext.getCurrentKeyGroupIndex());
            dirty.add(lastMarked);
        }
    }

    public void mark(EntryRef entry) {
        dirty.add(entry);
    }

    /** Hands over the entries marked so far and starts a new, empty dirty set. */
    public Set<EntryRef> drain() {
        Set<EntryRef> drained = dirty;
        dirty = new HashSet<>();
        lastMarked = null;
        return drained;
    }

    public int size() {
        return dirty.size();
    }
}
