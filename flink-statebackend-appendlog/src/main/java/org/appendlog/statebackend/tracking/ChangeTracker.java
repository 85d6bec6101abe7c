package org.appendlog.statebackend.tracking;

import org.apache.flink.runtime.state.InternalKeyContext;

import java.util.HashMap;
import java.util.Map;

/**
 * The dirty set: which entries were written or removed since the last capture. A key updated a
 * million times between two checkpoints is one entry here, and so one record in the log. Used only
 * on the task thread.
 *
 * <p>Each entry maps to its latest value when the write handed over an immutable value (a value
 * state of an immutable type), so the checkpoint needs no look-up; otherwise to {@link
 * #LOOK_UP}, and the checkpoint reads the heap table at the barrier.
 */
public final class ChangeTracker {

    /** The entry's value must be read from the heap table at the barrier. */
    public static final Object LOOK_UP = new Object();

    private final InternalKeyContext<?> keyContext;
    private Map<EntryRef, Object> dirty = new HashMap<>();
    private EntryRef lastMarked;

    public ChangeTracker(InternalKeyContext<?> keyContext) {
        this.keyContext = keyContext;
    }

    /** Marks the entry of the current key under {@code namespace} in state {@code stateId}. */
    public void markCurrentKey(int stateId, Object namespace) {
        dirty.put(currentEntry(stateId, namespace), LOOK_UP);
    }

    /** Marks the entry and remembers its new value, which must be of an immutable type. */
    public void markCurrentKey(int stateId, Object namespace, Object immutableValue) {
        dirty.put(currentEntry(stateId, namespace), immutableValue);
    }

    private EntryRef currentEntry(int stateId, Object namespace) {
        Object key = keyContext.getCurrentKey();
        if (lastMarked == null || !lastMarked.sameAs(stateId, key, namespace)) {
            lastMarked =
                    new EntryRef(stateId, key, namespace, keyContext.getCurrentKeyGroupIndex());
        }
        return lastMarked;
    }

    public void mark(EntryRef entry) {
        dirty.put(entry, LOOK_UP);
    }

    /** Hands over the entries marked so far and starts a new, empty dirty set. */
    public Map<EntryRef, Object> drain() {
        Map<EntryRef, Object> drained = dirty;
        dirty = new HashMap<>();
        lastMarked = null;
        return drained;
    }

    public int size() {
        return dirty.size();
    }
}
