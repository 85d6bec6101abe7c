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

package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.ReferenceFloor;
import org.appendlog.statebackend.log.SegmentedLog;
import org.appendlog.statebackend.tracking.ChangeTracker;
import org.appendlog.statebackend.tracking.EntryRef;
import org.appendlog.statebackend.tracking.LoggedState;
import org.appendlog.statebackend.tracking.LoggedTimers;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SnapshotType.SharingFilesStrategy;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.IterableStateSnapshot;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategy;
import org.apache.flink.runtime.state.heap.StateTable;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nonnull;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;


/**
 * Takes checkpoints of the append-log backend.
 *
 * <p>Synchronous phase (task thread): serialize the dirty entries (values as of the barrier, so
 * later in-place changes of mutable values cannot leak in), the timers' elements and the state meta data;
 * never the whole state. Asynchronous phase: append one batch, sync once, write the manifest.
 *
 * <p>Which batches a checkpoint lists, and which of them as placeholders, the {@link
 * CheckpointLineage} decides; whether a checkpoint appends its changes or every live entry, its
 * barrier ({@link CheckpointLineage#backlog}, {@link TurnoverDetector}). The {@link
 * IncrementalCheckpointStrategy}, the {@link FullCheckpointStrategy} and the {@link
 * SavepointStrategy} write the batches, and the {@link SnapshotHandleAssembler} the manifest and
 * the handle.
 */
public final class AppendLogSnapshotStrategy<K> {

    private static final Logger LOG = LoggerFactory.getLogger(AppendLogSnapshotStrategy.class);

    private final KeyGroupRange keyGroupRange;
    private final TypeSerializer<K> keySerializer;
    private final List<LoggedState<K>> states;
    private final List<LoggedTimers> timers;
    private final ChangeTracker tracker;
    private final SegmentedLog log;
    private final CheckpointLineage lineage;
    private final TurnoverDetector turnover;
    private final Executor background;
    private final IncrementalCheckpointStrategy incremental;
    private final FullCheckpointStrategy full;
    private final SavepointStrategy savepoint;
    private final SnapshotHandleAssembler handles;

    /** Serializes appends of concurrent asynchronous phases, and what they remember. */
    private final Object writeLock = new Object();

    public AppendLogSnapshotStrategy(
            UUID backendId,
            KeyGroupRange keyGroupRange,
            TypeSerializer<K> keySerializer,
            List<LoggedState<K>> states,
            List<LoggedTimers> timers,
            ChangeTracker tracker,
            SegmentedLog log,
            CheckpointLineage lineage,
            Executor background,
            double fullCheckpointRatio,
            boolean localBackup) {
        this.keyGroupRange = keyGroupRange;
        this.keySerializer = keySerializer;
        this.states = states;
        this.timers = timers;
        this.tracker = tracker;
        this.log = log;
        this.lineage = lineage;
        this.turnover = new TurnoverDetector(tracker, fullCheckpointRatio, this::liveEntries);
        this.background = background;
        this.incremental = new IncrementalCheckpointStrategy(keyGroupRange, log, lineage);
        this.full = new FullCheckpointStrategy(keyGroupRange, log, lineage);
        this.savepoint = new SavepointStrategy(backendId, keyGroupRange, log);
        this.handles = new SnapshotHandleAssembler(backendId, keyGroupRange, log, localBackup);
    }

    /** The strategy for one checkpoint, which knows whether it may share earlier files. */
    public SnapshotStrategy<KeyedStateHandle, AppendLogSnapshotResources> forCheckpoint(SharingFilesStrategy sharing) {
        return new SnapshotStrategy<KeyedStateHandle, AppendLogSnapshotResources>() {
            @Override
            public AppendLogSnapshotResources syncPrepareResources(long checkpointId)
                    throws Exception {
                if (sharing == SharingFilesStrategy.NO_SHARING) {
                    return capture(checkpointId, sharing);
                }
                ReferenceFloor floor = log.floor();
                floor.started(checkpointId);
                AppendLogSnapshotResources captured;
                try {
                    captured = capture(checkpointId, sharing);
                } catch (Throwable t) {
                    floor.ended(checkpointId);
                    throw t;
                }
                captured.whenReleased(() -> floor.ended(checkpointId));
                return captured;
            }

            @Override
            public SnapshotResultSupplier<KeyedStateHandle> asyncSnapshot(
                    AppendLogSnapshotResources captured,
                    long checkpointId,
                    long timestamp,
                    @Nonnull CheckpointStreamFactory streamFactory,
                    @Nonnull CheckpointOptions checkpointOptions) {
                return registry -> write(captured, streamFactory, registry);
            }
        };
    }

    // ------------------------------------------------------------------------
    //  synchronous phase
    // ------------------------------------------------------------------------

    private AppendLogSnapshotResources capture(long checkpointId, SharingFilesStrategy sharing)
            throws IOException {
        if (states.isEmpty() && timers.isEmpty()) {
            return new AppendLogSnapshotResources(
                    checkpointId, null, null, null, null, null, null, -1);
        }
        List<String> names = new ArrayList<>(states.size());
        List<StateMetaInfoSnapshot> metaInfos = new ArrayList<>();
        for (LoggedState<K> state : states) {
            names.add(state.name());
            metaInfos.add(state.table().getMetaInfo().snapshot());
        }
        for (LoggedTimers queue : timers) {
            metaInfos.add(
                    new RegisteredPriorityQueueStateBackendMetaInfo<>(
                                    queue.name(), queue.elementSerializer())
                            .snapshot());
        }
        KeyedBackendSerializationProxy<K> metadata =
                new KeyedBackendSerializationProxy<>(keySerializer, metaInfos, false);
        TimerFormat.Captured capturedTimers = TimerFormat.capture(timers);

        AppendLogSnapshotResources.Mode mode = AppendLogSnapshotResources.Mode.SAVEPOINT;
        Capture capture = null;
        long pendingFull = -1;
        // A savepoint is no part of the chain: its changes stay for the next checkpoint.
        if (sharing != SharingFilesStrategy.NO_SHARING) {
            boolean untracked = tracker.isPaused();
            capture = captureChanges(checkpointId, names);
            CheckpointLineage.Backlog backlog = lineage.backlog();
            boolean forward = sharing == SharingFilesStrategy.FORWARD;
            // Only a pending full checkpoint stands in the way: the asynchronous phase decides.
            boolean afterPendingFull = !forward && backlog.pendingFull >= 0;
            boolean forced = forward || (backlog.needsFull && !afterPendingFull);
            boolean lost = backlog.lost;
            boolean turnedOver =
                    !forced && !untracked && !lost && turnover.turnedOver(capture, backlog.changed);
            lost = lost || lostChanges(capture);
            boolean full = forced || untracked || turnedOver || lost;
            turnover.adjustTracking(checkpointId, untracked, forced || lost, turnedOver);
            lineage.barrierTaken(capture, full);
            if (full) {
                capture.discardLogged(background);
                mode = AppendLogSnapshotResources.Mode.FULL;
            } else if (afterPendingFull) {
                mode = AppendLogSnapshotResources.Mode.AFTER_PENDING_FULL;
                pendingFull = backlog.pendingFull;
            } else {
                mode = AppendLogSnapshotResources.Mode.INCREMENTAL;
            }
        }
        boolean writesChanges =
                mode == AppendLogSnapshotResources.Mode.INCREMENTAL
                        || mode == AppendLogSnapshotResources.Mode.AFTER_PENDING_FULL;
        return new AppendLogSnapshotResources(
                checkpointId,
                mode,
                metadata,
                capturedTimers,
                names,
                writesChanges ? capture : null,
                mode == AppendLogSnapshotResources.Mode.INCREMENTAL ? null : snapshotTables(),
                pendingFull);
    }

    private static boolean lostChanges(Capture capture) {
        if (!capture.lostChanges()) {
            return false;
        }
        LOG.info(
                "Checkpoint {}: the changes logged since the last checkpoint were lost while"
                        + " deduplicating them; it appends all live entries",
                capture.checkpointId);
        return true;
    }

    private long liveEntries() {
        long live = 0;
        for (LoggedState<K> state : states) {
            live += state.table().size();
        }
        return live;
    }

    private List<StateTableSnapshot> snapshotTables() {
        List<StateTableSnapshot> tables = new ArrayList<>(states.size());
        for (LoggedState<K> state : states) {
            tables.add(snapshotTable(state));
        }
        return tables;
    }

    /**
     * The marked entries, looked up and serialized now, and the logged writes, handed over as
     * they are (the asynchronous phase deduplicates them).
     */
    @SuppressWarnings("unchecked")
    private Capture captureChanges(long checkpointId, List<String> names) throws IOException {
        Capture capture =
                new Capture(checkpointId, new BatchBuilder(checkpointId, keyGroupRange, names));
        TypeSerializer<Object> keys = (TypeSerializer<Object>) keySerializer;
        Set<EntryRef> marked = tracker.drainMarked();
        Map<Integer, Capture.Serializers> serializers = new HashMap<>();
        EntryRef current = null;
        try {
            for (EntryRef entry : marked) {
                current = entry;
                StateTable<K, Object, Object> table = states.get(entry.stateId()).table();
                capture.add(
                        entry,
                        serializers.computeIfAbsent(entry.stateId(), id -> serializersOf(table)),
                        table.getMapForKeyGroup(entry.keyGroup())
                                .get((K) entry.key(), entry.namespace()));
            }
        } catch (Exception e) {
            // This checkpoint fails; its changes must reach the next one.
            marked.forEach(tracker::mark);
            throw new IOException(
                    "Checkpoint "
                            + checkpointId
                            + " could not serialize an entry of state '"
                            + states.get(current.stateId()).name()
                            + "' (key group "
                            + current.keyGroup()
                            + ") with the state's serializers: "
                            + e,
                    e);
        } catch (Error e) {
            marked.forEach(tracker::mark);
            throw e;
        }
        capture.logged(tracker.drainLogged());
        return capture;
    }

    @SuppressWarnings("unchecked")
    private Capture.Serializers serializersOf(StateTable<K, Object, Object> table) {
        return new Capture.Serializers(
                (TypeSerializer<Object>) keySerializer,
                table.getNamespaceSerializer(),
                table.getStateSerializer());
    }

    @SuppressWarnings("unchecked")
    private StateTableSnapshot snapshotTable(LoggedState<K> state) {
        StateTable<K, Object, Object> table = state.table();
        return new StateTableSnapshot(
                state.id(),
                (IterableStateSnapshot<Object, Object, Object>) (IterableStateSnapshot<?, ?, ?>)
                        table.stateSnapshot(),
                serializersOf(table));
    }

    // ------------------------------------------------------------------------
    //  asynchronous phase
    // ------------------------------------------------------------------------

    private SnapshotResult<KeyedStateHandle> write(
            AppendLogSnapshotResources captured,
            CheckpointStreamFactory streamFactory,
            CloseableRegistry registry)
            throws Exception {
        if (captured.hasNoState()) {
            return SnapshotResult.empty();
        }
        SnapshotBatches written;
        if (captured.mode == AppendLogSnapshotResources.Mode.SAVEPOINT) {
            written = savepoint.write(captured, streamFactory, registry);
        } else {
            synchronized (writeLock) {
                // The barrier's mode, or, after a pending full checkpoint, the lineage decides.
                CheckpointListing listing = listing(captured);
                written =
                        listing.full
                                ? full.write(captured, listing)
                                : incremental.write(captured, listing);
            }
        }
        return handles.assemble(captured, written, streamFactory, registry);
    }

    private CheckpointListing listing(AppendLogSnapshotResources captured) {
        switch (captured.mode) {
            case INCREMENTAL:
                return lineage.listIncremental(captured.checkpointId);
            case AFTER_PENDING_FULL:
                return lineage.listAfterFull(captured.checkpointId, captured.pendingFull);
            default:
                return lineage.listFull();
        }
    }

    /** Full batches appended so far: after a restore, or instead of larger incremental ones. */
    public long fullBatches() {
        return full.fullBatches();
    }
}
