package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.ReferenceFloor;
import org.appendlog.statebackend.log.SegmentedLog;
import org.appendlog.statebackend.tracking.ChangeTracker;
import org.appendlog.statebackend.tracking.EntryRef;
import org.appendlog.statebackend.tracking.LoggedState;
import org.appendlog.statebackend.tracking.LoggedTimers;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.memory.DataOutputViewStreamWrapper;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SnapshotType.SharingFilesStrategy;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.IterableStateSnapshot;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.RegisteredPriorityQueueStateBackendMetaInfo;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.SnapshotStrategy;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.heap.StateTable;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nonnull;
import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

import static org.appendlog.statebackend.log.BatchLocation.segmentsOf;

/**
 * Takes checkpoints of the append-log backend.
 *
 * <p>Synchronous phase (task thread): serialize the dirty entries (values as of the barrier, so
 * later in-place changes of mutable values cannot leak in), the timers' elements and the state meta data;
 * never the whole state. Asynchronous phase: append one batch, sync once, write the manifest.
 *
 * <p>Which batches a checkpoint lists, and which of them as placeholders, the {@link
 * CheckpointLineage} decides; whether a checkpoint appends its changes or every live entry, its
 * barrier ({@link CheckpointLineage#backlog}, {@link TurnoverDetector}).
 */
public final class AppendLogSnapshotStrategy<K> {

    private static final Logger LOG = LoggerFactory.getLogger(AppendLogSnapshotStrategy.class);

    private final UUID backendId;
    private final KeyGroupRange keyGroupRange;
    private final TypeSerializer<K> keySerializer;
    private final List<LoggedState<K>> states;
    private final List<LoggedTimers> timers;
    private final ChangeTracker tracker;
    private final SegmentedLog log;
    private final CheckpointLineage lineage;
    private final TurnoverDetector turnover;
    private final Executor background;
    /** Flink's local backup is on: checkpoints also hand Flink a {@link LocalReferenceHandle}. */
    private final boolean localBackup;

    /** Serializes appends of concurrent asynchronous phases, and what they remember. */
    private final Object writeLock = new Object();

    private final AtomicLong fullBatches = new AtomicLong();

    /**
     * Per key group, the bytes of the last batch a checkpoint appended: the next batch's buffers
     * start at that size. Guarded by writeLock.
     */
    private int[] lastBatchBytes;
    /** The size of the last checkpoint's timers, likewise. */
    private volatile int lastTimerBytes;

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
        this.backendId = backendId;
        this.keyGroupRange = keyGroupRange;
        this.keySerializer = keySerializer;
        this.states = states;
        this.timers = timers;
        this.tracker = tracker;
        this.log = log;
        this.lineage = lineage;
        this.turnover = new TurnoverDetector(tracker, fullCheckpointRatio, this::liveEntries);
        this.background = background;
        this.localBackup = localBackup;
    }

    /** The strategy for one checkpoint, which knows whether it may share earlier files. */
    public SnapshotStrategy<KeyedStateHandle, CapturedState> forCheckpoint(SharingFilesStrategy sharing) {
        return new SnapshotStrategy<KeyedStateHandle, CapturedState>() {
            @Override
            public CapturedState syncPrepareResources(long checkpointId) throws Exception {
                if (sharing == SharingFilesStrategy.NO_SHARING) {
                    return capture(checkpointId, sharing);
                }
                ReferenceFloor floor = log.floor();
                floor.started(checkpointId);
                CapturedState captured;
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
                    CapturedState captured,
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

    private CapturedState capture(long checkpointId, SharingFilesStrategy sharing)
            throws IOException {
        if (states.isEmpty() && timers.isEmpty()) {
            return new CapturedState(checkpointId, null, null, null, null, null, null, -1);
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

        CapturedState.Mode mode = CapturedState.Mode.SAVEPOINT;
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
                mode = CapturedState.Mode.FULL;
            } else if (afterPendingFull) {
                mode = CapturedState.Mode.AFTER_PENDING_FULL;
                pendingFull = backlog.pendingFull;
            } else {
                mode = CapturedState.Mode.INCREMENTAL;
            }
        }
        boolean writesChanges =
                mode == CapturedState.Mode.INCREMENTAL
                        || mode == CapturedState.Mode.AFTER_PENDING_FULL;
        return new CapturedState(
                checkpointId,
                mode,
                metadata,
                capturedTimers,
                names,
                writesChanges ? capture : null,
                mode == CapturedState.Mode.INCREMENTAL ? null : snapshotTables(),
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
            CapturedState captured,
            CheckpointStreamFactory streamFactory,
            CloseableRegistry registry)
            throws Exception {
        if (captured.hasNoState()) {
            return SnapshotResult.empty();
        }
        long checkpointId = captured.checkpointId;
        List<BatchLocation> batches;
        // Segments this checkpoint lists as placeholders, which the JobManager resolves.
        Set<String> placeholders = Set.of();
        List<HandleAndLocalPath> privateState = new ArrayList<>();
        long appended = 0;
        switch (captured.mode) {
            case INCREMENTAL:
            case AFTER_PENDING_FULL:
            case FULL:
                synchronized (writeLock) {
                    CheckpointLineage.Listing listing = listing(captured);
                    placeholders = listing.placeholders;
                    BatchLocation location =
                            listing.full
                                    ? appendFull(captured, listing.confirmed)
                                    : appendChanges(captured, listing);
                    batches = listing.full ? List.of(location) : listing.batches;
                    appended = location == null ? 0 : location.length();
                }
                break;
            case SAVEPOINT:
                String segment = "savepoint-" + backendId + "-" + checkpointId + ".seg";
                CheckpointStateOutputStream out =
                        streamFactory.createCheckpointStateOutputStream(
                                CheckpointedStateScope.EXCLUSIVE);
                registry.registerCloseable(out);
                out.write(BatchFormat.segmentHeader());
                BatchLocation location =
                        new FullBatch(captured, keyGroupRange, log.compression())
                                .write(out, segment, BatchFormat.SEGMENT_HEADER_BYTES);
                StreamStateHandle handle = closeAndGetHandle(out, registry);
                privateState.add(HandleAndLocalPath.of(handle, segment));
                batches = List.of(location);
                appended = handle.getStateSize();
                break;
            default:
                throw new IllegalStateException(String.valueOf(captured.mode));
        }

        CheckpointStateOutputStream out =
                streamFactory.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE);
        registry.registerCloseable(out);
        long timersStart = System.nanoTime();
        byte[] timers = captured.timers.toBytes(lastTimerBytes);
        lastTimerBytes = timers.length;
        long timersMillis = (System.nanoTime() - timersStart) / 1_000_000;
        new CheckpointManifest(
                        captured.metadata,
                        timers,
                        batches,
                        log.lineage().with(backendId, checkpointId))
                .write(new DataOutputViewStreamWrapper(out));
        StreamStateHandle manifest = closeAndGetHandle(out, registry);
        LOG.debug(
                "Checkpoint {} wrote its manifest ({} bytes, {} of them timers, serialized in {} ms)"
                        + " referring to {} batch(es)",
                checkpointId,
                manifest.getStateSize(),
                timers.length,
                timersMillis,
                batches.size());

        List<HandleAndLocalPath> sharedState = new ArrayList<>();
        if (captured.mode != CapturedState.Mode.SAVEPOINT) {
            for (String segment : segmentsOf(batches)) {
                HandleAndLocalPath shared =
                        HandleAndLocalPath.of(sharedHandle(segment, placeholders), segment);
                // What this checkpoint alone refers to comes first. The JobManager registers the
                // list in order and stops at a placeholder it refuses (a concurrent checkpoint's
                // completion unregistered that segment): what it registered before Flink deletes
                // once unused; what came after, neither Flink nor the task would ever delete.
                if (shared.getHandle() instanceof PlaceholderStreamStateHandle) {
                    sharedState.add(shared);
                } else {
                    sharedState.add(0, shared);
                }
            }
        }
        long checkpointedSize = appended + manifest.getStateSize();
        IncrementalRemoteKeyedStateHandle handle =
                new IncrementalRemoteKeyedStateHandle(
                        backendId,
                        keyGroupRange,
                        checkpointId,
                        sharedState,
                        privateState,
                        manifest,
                        checkpointedSize);
        if (!localBackup || captured.mode == CapturedState.Mode.SAVEPOINT) {
            return SnapshotResult.of(handle);
        }
        List<HandleAndLocalPath> segments = new ArrayList<>();
        for (String segment : segmentsOf(batches)) {
            segments.add(HandleAndLocalPath.of(log.handle(segment), segment));
        }
        return SnapshotResult.withLocalState(
                handle,
                new LocalReferenceHandle(
                        backendId,
                        keyGroupRange,
                        checkpointId,
                        segments,
                        privateState,
                        manifest,
                        checkpointedSize));
    }

    /**
     * Appends one batch carrying the listing's captures, deduplicated, and adds it to the
     * listing's batches; null if they changed nothing. Under the write lock.
     */
    @Nullable
    private BatchLocation appendChanges(CapturedState captured, CheckpointLineage.Listing listing)
            throws IOException {
        long checkpointId = captured.checkpointId;
        long start = System.nanoTime();
        for (Capture c : listing.captures) {
            materialize(c);
        }
        BatchBuilder batch = merge(checkpointId, captured.stateNames, listing.captures);
        BatchLocation location = null;
        long materialized = System.nanoTime();
        if (batch.recordCount() > 0) {
            // an empty batch (an idle interval) says nothing about the next one
            lastBatchBytes = batch.keyGroupBytes();
            location = log.append(batch, listing.confirmed);
            listing.batches.add(location);
            LOG.debug(
                    "Checkpoint {} appended {} records ({} bytes) to state log segment {} at offset {}: changes deduplicated in {} ms, written and synced in {} ms",
                    checkpointId,
                    batch.recordCount(),
                    location.length(),
                    location.segment(),
                    location.offset(),
                    (materialized - start) / 1_000_000,
                    (System.nanoTime() - materialized) / 1_000_000);
        }
        lineage.remember(
                checkpointId,
                listing.batches,
                listing.builtOn,
                false,
                listing.compaction,
                batch,
                location);
        return location;
    }

    private CheckpointLineage.Listing listing(CapturedState captured) {
        switch (captured.mode) {
            case INCREMENTAL:
                return lineage.listIncremental(captured.checkpointId);
            case AFTER_PENDING_FULL:
                return lineage.listAfterFull(captured.checkpointId, captured.pendingFull);
            default:
                return lineage.listFull();
        }
    }

    /**
     * Builds a capture's records. Should its logged changes turn out lost, this checkpoint fails,
     * and the next appends every live entry.
     */
    private void materialize(Capture capture) throws IOException {
        try {
            capture.materialize(lastBatchBytes);
        } catch (IOException e) {
            if (capture.lostChanges()) {
                lineage.requireFullCheckpoint();
            }
            throw e;
        }
    }

    /**
     * Appends every live entry of the captured tables as one batch, written as a stream, which
     * refers to no earlier one. Under the write lock.
     */
    private BatchLocation appendFull(CapturedState captured, Set<String> confirmed)
            throws IOException {
        long start = System.nanoTime();
        FullBatch all = new FullBatch(captured, keyGroupRange, log.compression());
        BatchLocation location = log.append(all, confirmed);
        lineage.remember(captured.checkpointId, List.of(location), -1, true, null, null, location);
        fullBatches.incrementAndGet();
        LOG.debug(
                "Checkpoint {} appended all {} live records ({} bytes) to state log segment {} at"
                        + " offset {} in {} ms",
                captured.checkpointId,
                all.recordCount(),
                location.length(),
                location.segment(),
                location.offset(),
                (System.nanoTime() - start) / 1_000_000);
        return location;
    }

    /** Full batches appended so far: after a restore, or instead of larger incremental ones. */
    public long fullBatches() {
        return fullBatches.get();
    }

    private static StreamStateHandle closeAndGetHandle(
            CheckpointStateOutputStream out, CloseableRegistry registry) throws IOException {
        if (!registry.unregisterCloseable(out)) {
            throw new IOException("Checkpoint was cancelled while writing " + out);
        }
        return out.closeAndGetHandle();
    }

    private BatchBuilder merge(long checkpointId, List<String> names, List<Capture> captures)
            throws IOException {
        if (captures.size() == 1) {
            return captures.get(0).records();
        }
        BatchBuilder batch = new BatchBuilder(checkpointId, keyGroupRange, names, lastBatchBytes);
        for (Capture capture : captures) {
            batch.appendAll(capture.records());
        }
        return batch;
    }

    /**
     * How this checkpoint's handle lists {@code segment}. A segment that the last completed
     * checkpoint refers to is listed as a placeholder, as RocksDB lists the files it uploaded
     * before: should the task discard this checkpoint before the JobManager registered it (the
     * task fails, the checkpoint is aborted), Flink deletes the shared state the handle lists, and
     * must find only what this checkpoint alone wrote. The JobManager swaps in the registered
     * handle, and refuses the acknowledgement if it has none.
     */
    private StreamStateHandle sharedHandle(String segment, Set<String> placeholders) {
        StreamStateHandle handle = log.handle(segment);
        return placeholders.contains(segment)
                ? new PlaceholderStreamStateHandle(
                        handle.getStreamStateHandleID(), handle.getStateSize(), false)
                : handle;
    }
}
