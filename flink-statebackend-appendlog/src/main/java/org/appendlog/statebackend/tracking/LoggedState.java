package org.appendlog.statebackend.tracking;

import org.apache.flink.api.common.state.StateDescriptor;
import org.apache.flink.runtime.state.heap.AbstractHeapState;
import org.apache.flink.runtime.state.heap.CopyOnWriteStateTable;
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
    private boolean stamped;

    private LoggedState(
            int id,
            String name,
            TrackedKvState<K, Object, Object, ?> tracked,
            StateTable<K, Object, Object> table) {
        this.id = id;
        this.name = name;
        this.tracked = tracked;
        this.table = table;
    }

    /** Wraps a state of the heap backend so that its writes reach {@code tracker}. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static <K> LoggedState<K> track(
            int id,
            StateDescriptor.Type type,
            InternalKvState<K, ?, ?> heapState,
            ChangeTracker tracker,
            InternalKeyContext<K> keyContext) {
        TrackedKvState tracked;
        switch (type) {
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
                        "The appendlog state backend does not support " + type + " state");
        }
        StateTable<K, Object, Object> table = tableOf(heapState);
        LoggedState<K> state = new LoggedState<>(id, table.getMetaInfo().getName(), tracked, table);
        state.stamped = stampable(table);
        tracked.setStamped(state.stamped);
        return state;
    }

    /**
     * Flink's copy-on-write table stamps every entry it writes with its current version, but a
     * mutable value can also change in place after a read, unstamped.
     */
    private static boolean stampable(StateTable<?, ?, ?> table) {
        return table instanceof CopyOnWriteStateTable
                && table.getStateSerializer().isImmutableType();
    }

    @SuppressWarnings("unchecked")
    private static <K> StateTable<K, Object, Object> tableOf(InternalKvState<K, ?, ?> heapState) {
        return ((AbstractHeapState<K, Object, Object>) heapState).getStateTable();
    }

    /**
     * The state was registered again, with new serializers or functions. Returns false if its
     * writes were found by stamps and no longer can be (its values became mutable): writes since
     * the last checkpoint are then known to nobody, and the next checkpoint must be full.
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public boolean update(InternalKvState<K, ?, ?> heapState) {
        tracked.replaceDelegate((InternalKvState) heapState);
        table = tableOf(heapState);
        if (stamped && !stampable(table)) {
            stamped = false;
            tracked.setStamped(false);
            return false;
        }
        return true;
    }

    /**
     * Whether checkpoints find the entries written since the last one by the version stamps of the
     * heap table (see {@code ChangeScan}); otherwise by the {@link ChangeTracker}'s marks. Removed
     * entries are always marked.
     */
    public boolean isStamped() {
        return stamped;
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
