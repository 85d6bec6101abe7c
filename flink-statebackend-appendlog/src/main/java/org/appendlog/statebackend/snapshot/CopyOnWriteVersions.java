package org.appendlog.statebackend.snapshot;

import org.apache.flink.runtime.state.StateEntry;
import org.apache.flink.runtime.state.heap.CopyOnWriteStateMap;
import org.apache.flink.runtime.state.heap.CopyOnWriteStateMapSnapshot;

import java.lang.invoke.MethodHandles;
import java.lang.invoke.VarHandle;

/**
 * Reads the version stamps of Flink's copy-on-write state maps, which Flink keeps package-private:
 * the version of the map at which an entry's value was last written, and the version a snapshot
 * of the map started. Read through var handles rather than from a class in Flink's package, so
 * that it works from any class loader.
 */
final class CopyOnWriteVersions {

    private static final VarHandle STATE_VERSION;
    private static final VarHandle SNAPSHOT_VERSION;

    static {
        try {
            Class<?> entry =
                    Class.forName(
                            CopyOnWriteStateMap.class.getName() + "$StateMapEntry",
                            false,
                            CopyOnWriteStateMap.class.getClassLoader());
            STATE_VERSION =
                    MethodHandles.privateLookupIn(entry, MethodHandles.lookup())
                            .findVarHandle(entry, "stateVersion", int.class);
            SNAPSHOT_VERSION =
                    MethodHandles.privateLookupIn(
                                    CopyOnWriteStateMapSnapshot.class, MethodHandles.lookup())
                            .findVarHandle(
                                    CopyOnWriteStateMapSnapshot.class, "snapshotVersion", int.class);
        } catch (ReflectiveOperationException e) {
            throw new IllegalStateException(
                    "The appendlog state backend needs the version stamps of Flink 1.20's"
                            + " CopyOnWriteStateMap, which this Flink does not have: "
                            + e,
                    e);
        }
    }

    private CopyOnWriteVersions() {}

    /** The map version at which the value of {@code entry}, an entry of a map snapshot, was written. */
    static int stateVersion(StateEntry<?, ?, ?> entry) {
        return (int) STATE_VERSION.get(entry);
    }

    /** Entries written after {@code snapshot} was taken carry this version or a later one. */
    static int snapshotVersion(CopyOnWriteStateMapSnapshot<?, ?, ?> snapshot) {
        return (int) SNAPSHOT_VERSION.get(snapshot);
    }
}
