package org.appendlog.statebackend.snapshot;

import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.SnapshotResources;

import java.util.List;

/** What the synchronous phase hands to the asynchronous one. */
public final class CapturedState implements SnapshotResources {

    /** How a checkpoint is written. */
    enum Mode {
        /** Only the entries changed since the last completed checkpoint, appended to the log. */
        INCREMENTAL,
        /** All entries, appended to the log; refers to no earlier batch (NO_CLAIM, first after restore from another format). */
        FULL,
        /** All entries, into a self-contained file of the savepoint (native savepoint format). */
        SAVEPOINT
    }

    final long checkpointId;
    final Mode mode;
    final KeyedBackendSerializationProxy<?> metadata;
    final TimerFormat.Captured timers;
    final List<String> stateNames;
    /** Set for {@link Mode#INCREMENTAL}. */
    final Capture capture;
    /** Set for {@link Mode#FULL} and {@link Mode#SAVEPOINT}. */
    final List<StateTableSnapshot> tables;

    CapturedState(
            long checkpointId,
            Mode mode,
            KeyedBackendSerializationProxy<?> metadata,
            TimerFormat.Captured timers,
            List<String> stateNames,
            Capture capture,
            List<StateTableSnapshot> tables) {
        this.checkpointId = checkpointId;
        this.mode = mode;
        this.metadata = metadata;
        this.timers = timers;
        this.stateNames = stateNames;
        this.capture = capture;
        this.tables = tables;
    }

    boolean hasNoState() {
        return metadata == null;
    }

    @Override
    public void release() {
        if (tables != null) {
            tables.forEach(StateTableSnapshot::release);
        }
    }
}
