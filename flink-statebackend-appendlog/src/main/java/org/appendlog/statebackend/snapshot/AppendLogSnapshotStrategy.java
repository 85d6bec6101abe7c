package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.compaction.CompactionResult;
import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchLocation;
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
import org.apache.flink.runtime.state.StateEntry;
import org.apache.flink.runtime.state.heap.StateTable;
import org.apache.flink.runtime.state.metainfo.StateMetaInfoSnapshot;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nonnull;
import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.Executor;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Takes checkpoints of the append-log backend.
 *
 * <p>Synchronous phase (task thread): serialize the dirty entries (values as of the barrier, so
 * later in-place changes of mutable values cannot leak in), the timers' elements and the state meta data;
 * never the whole state. Asynchronous phase: append one batch, sync once, write the manifest.
 *
 * <p>A checkpoint's batches are those of the last <em>completed</em> checkpoint plus one new batch
 * carrying every capture taken since (or, with concurrent checkpoints, those of a pending checkpoint
 * that holds the completed one's changes: {@link #pendingOnAnEarlierLog}). Captures are dropped only
 * when a checkpoint containing them completes, so an aborted, failed or out-of-order checkpoint
 * never loses a change.
 */
public final class AppendLogSnapshotStrategy<K> {

    private static final Logger LOG = LoggerFactory.getLogger(AppendLogSnapshotStrategy.class);

    /** Barriers in a row that find the state turned over before tracking pauses. */
    public static final int TURNOVERS_TO_PAUSE = 3;
    /** Untracked intervals after which one is tracked again, to find out if the state settled. */
    public static final int PAUSED_INTERVALS_PER_PROBE = 8;

    private final UUID backendId;
    private final KeyGroupRange keyGroupRange;
    private final TypeSerializer<K> keySerializer;
    private final List<LoggedState<K>> states;
    private final List<LoggedTimers> timers;
    private final ChangeTracker tracker;
    private final SegmentedLog log;
    private final LogIndex index;
    private final Executor background;
    /** Changed entries per live entry above which a checkpoint appends all live entries. */
    private final double fullCheckpointRatio;
    /** Flink's local backup is on: checkpoints also hand Flink a {@link LocalReferenceHandle}. */
    private final boolean localBackup;

    /**
     * Guards pending, written, carried, base, needsFull, lastFull and the pending compaction.
     */
    private final Object lock = new Object();
    /** Serializes appends and index updates of concurrent asynchronous phases. */
    private final Object writeLock = new Object();

    private final List<Capture> pending = new ArrayList<>();
    private final AtomicLong fullBatches = new AtomicLong();

    /** Checkpoints written but not yet known to be complete. */
    private final TreeMap<Long, WrittenCheckpoint> written = new TreeMap<>();
    /** For each batch of the log that a checkpoint appended: the changes it carries. */
    private final Map<String, CarriedChanges> carried = new HashMap<>();
    /** The last checkpoint known complete, and those aborted since: none of them is remembered. */
    private long lastCompleted = -1;
    private final Set<Long> aborted = new HashSet<>();
    private List<BatchLocation> base;
    private boolean needsFull;
    /**
     * The last checkpoint that its barrier made full: until it or a later one completes, the
     * index may come to follow a full batch that a checkpoint building on an earlier one would
     * not contain.
     */
    private long lastFull = -1;
    /**
     * Per key group, the bytes of the last batch a checkpoint appended: the next batch's buffers
     * start at that size. Guarded by writeLock.
     */
    private int[] lastBatchBytes;
    /** The size of the last checkpoint's timers, likewise. */
    private volatile int lastTimerBytes;
    /** Barriers in a row that found the state turned over; task thread. */
    private int turnoversInARow;
    /** Intervals since tracking paused or was last probed; task thread. */
    private int pausedIntervals;
    /** A compaction result that no completed checkpoint has taken up yet. */
    private CompactionResult pendingCompaction;
    /**
     * The first checkpoint that referred to the pending compaction's run, or -1: if the task
     * discards that checkpoint unregistered, the run goes with it.
     */
    private long pendingTakenUpBy = -1;

    public AppendLogSnapshotStrategy(
            UUID backendId,
            KeyGroupRange keyGroupRange,
            TypeSerializer<K> keySerializer,
            List<LoggedState<K>> states,
            List<LoggedTimers> timers,
            ChangeTracker tracker,
            SegmentedLog log,
            LogIndex index,
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
        this.index = index;
        this.background = background;
        this.fullCheckpointRatio = fullCheckpointRatio;
        this.localBackup = localBackup;
        this.base = new ArrayList<>();
    }

    /** Sets what the first checkpoint after a restore builds on. */
    public void startFrom(List<BatchLocation> restoredBatches, boolean needsFull) {
        synchronized (lock) {
            this.base = new ArrayList<>(restoredBatches);
            this.needsFull = needsFull;
        }
    }


    /** The strategy for one checkpoint, which knows whether it may share earlier files. */
    public SnapshotStrategy<KeyedStateHandle, CapturedState> forCheckpoint(SharingFilesStrategy sharing) {
        return new SnapshotStrategy<KeyedStateHandle, CapturedState>() {
            @Override
            public CapturedState syncPrepareResources(long checkpointId) throws Exception {
                return capture(checkpointId, sharing);
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
            return new CapturedState(checkpointId, null, null, null, null, null, null);
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
        TimerFormat.Captured capturedTimers = TimerFormat.capture(timers, keyGroupRange);

        CapturedState.Mode mode = CapturedState.Mode.SAVEPOINT;
        Capture capture = null;
        // A savepoint is no part of the chain: its changes stay for the next checkpoint.
        if (sharing != SharingFilesStrategy.NO_SHARING) {
            boolean untracked = tracker.isPaused();
            capture = captureChanges(checkpointId, names);
            boolean forced;
            long changedBefore;
            boolean lost;
            synchronized (lock) {
                forced = sharing == SharingFilesStrategy.FORWARD || needsFull;
                changedBefore = pending.stream().mapToLong(c -> c.changed).sum();
                lost = pending.stream().anyMatch(Capture::lostChanges);
            }
            boolean turnover =
                    !forced && !untracked && !lost && turnedOver(capture, changedBefore);
            lost = lost || lostChanges(capture);
            boolean full = forced || untracked || turnover || lost;
            adjustTracking(checkpointId, untracked, forced || lost, turnover);
            synchronized (lock) {
                // Until this or a later full checkpoint completes, every checkpoint is full: once
                // a full checkpoint completes, the index follows its batch alone, which an
                // incremental checkpoint building on an earlier chain would not contain. So a
                // full checkpoint's changes are never written: should it fail, the next one is
                // full again.
                if (full) {
                    needsFull = true;
                    lastFull = checkpointId;
                } else {
                    pending.add(capture);
                }
            }
            if (full) {
                capture.discardLogged(background);
            }
            mode = full ? CapturedState.Mode.FULL : CapturedState.Mode.INCREMENTAL;
        }
        boolean incremental = mode == CapturedState.Mode.INCREMENTAL;
        return new CapturedState(
                checkpointId,
                mode,
                metadata,
                capturedTimers,
                names,
                incremental ? capture : null,
                incremental ? null : snapshotTables());
    }

    /**
     * Whether the changes since the last completed checkpoint (the new capture's and {@code
     * changedBefore} of the pending ones, all of which the next batch would carry) outnumber the
     * live entries by more than the configured ratio: state that turned over, such as windows.
     * Estimated first; counted (deduplicating on the task thread what the background thread has
     * not yet) only if the estimate exceeds the limit, since the estimate is coarse for the last
     * writes, which is all there is when few writes came between two barriers.
     */
    private boolean turnedOver(Capture capture, long changedBefore) {
        long live = liveEntries();
        // An infinite ratio means never, with no live entries too (infinity times none is NaN).
        double limit =
                Double.isInfinite(fullCheckpointRatio)
                        ? fullCheckpointRatio
                        : fullCheckpointRatio * live;
        if (changedBefore + capture.changed <= limit
                || changedBefore + capture.countChanged() <= limit) {
            return false;
        }
        LOG.debug(
                "Checkpoint {}: {} entries changed since the last completed checkpoint, more than"
                        + " {} times the {} live entries; it appends all live entries",
                capture.checkpointId,
                changedBefore + capture.changed,
                fullCheckpointRatio,
                live);
        return true;
    }

    /**
     * Pauses tracking once {@link #TURNOVERS_TO_PAUSE} barriers in a row found the state turned
     * over (TopK's windows: every checkpoint was full, and logging each write cost the task for
     * nothing), and tracks one interval of every {@link #PAUSED_INTERVALS_PER_PROBE}, whose barrier
     * finds out whether the state still turns over. A barrier whose checkpoint was full anyway
     * (the last full one had not completed, or changes were lost) judges nothing.
     */
    private void adjustTracking(
            long checkpointId, boolean untracked, boolean judgesNothing, boolean turnover) {
        if (untracked) {
            if (++pausedIntervals >= PAUSED_INTERVALS_PER_PROBE) {
                pausedIntervals = 0;
                tracker.setPaused(false);
            }
        } else if (turnover) {
            if (++turnoversInARow == TURNOVERS_TO_PAUSE) {
                LOG.info(
                        "Checkpoint {}: the state turned over at {} checkpoints in a row; changes"
                                + " are not tracked, and checkpoints append all live entries, until"
                                + " the state settles (tracked for one interval in {})",
                        checkpointId,
                        TURNOVERS_TO_PAUSE,
                        PAUSED_INTERVALS_PER_PROBE);
            }
            tracker.setPaused(turnoversInARow >= TURNOVERS_TO_PAUSE);
        } else if (!judgesNothing) {
            if (turnoversInARow >= TURNOVERS_TO_PAUSE) {
                LOG.info(
                        "Checkpoint {}: the state no longer turns over; changes are tracked again",
                        checkpointId);
            }
            turnoversInARow = 0;
        }
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
        // Segments that the last completed checkpoint refers to: registered with the JobManager.
        Set<String> confirmed = Set.of();
        // Segments this checkpoint lists as placeholders: the confirmed ones, and a compaction run
        // that an earlier checkpoint took up.
        Set<String> placeholders = Set.of();
        List<HandleAndLocalPath> privateState = new ArrayList<>();
        long appended = 0;
        switch (captured.mode) {
            case INCREMENTAL:
                synchronized (writeLock) {
                    List<Capture> toWrite = new ArrayList<>();
                    long builtOn;
                    CompactionResult compaction;
                    synchronized (lock) {
                        WrittenCheckpoint earlier = pendingOnAnEarlierLog(checkpointId);
                        if (earlier != null) {
                            // Its segments are registered by the completed checkpoint or by its
                            // own acknowledgement; only those both logs hold stay registered
                            // whichever completes.
                            batches = new ArrayList<>(earlier.batches);
                            placeholders = segmentsOf(earlier.batches);
                            confirmed = new HashSet<>(segmentsOf(base));
                            confirmed.retainAll(placeholders);
                            compaction = earlier.compaction;
                        } else {
                            confirmed = segmentsOf(base);
                            compaction = compactionFor(base, checkpointId);
                            batches = withCompaction(base, compaction);
                            placeholders = new HashSet<>(confirmed);
                            if (compaction != null
                                    && compaction.run() != null
                                    && pendingTakenUpBy != checkpointId) {
                                placeholders.add(compaction.run().segment());
                            }
                        }
                        // Either way its batch carries every change since that one's barrier.
                        builtOn = lastCompleted;
                        for (Capture c : pending) {
                            if (c.checkpointId <= checkpointId) {
                                c.claimed = true;
                                toWrite.add(c);
                            }
                        }
                    }
                    long start = System.nanoTime();
                    for (Capture c : toWrite) {
                        materialize(c);
                    }
                    BatchBuilder batch = merge(checkpointId, captured.stateNames, toWrite);
                    BatchLocation location = null;
                    long materialized = System.nanoTime();
                    if (batch.recordCount() > 0) {
                        // an empty batch (an idle interval) says nothing about the next one
                        lastBatchBytes = batch.keyGroupBytes();
                        location = log.append(batch, confirmed);
                        batches.add(location);
                        appended = location.length();
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
                    remember(checkpointId, batches, builtOn, false, compaction, batch, location);
                }
                break;
            case FULL:
                synchronized (writeLock) {
                    synchronized (lock) {
                        confirmed = segmentsOf(base);
                    }
                    placeholders = confirmed;
                    BatchLocation location = appendFull(captured, confirmed);
                    batches = List.of(location);
                    appended = location.length();
                }
                break;
            case SAVEPOINT:
                Capture all = captureTables(checkpointId, captured);
                String segment = "savepoint-" + backendId + "-" + checkpointId + ".seg";
                CheckpointStateOutputStream out =
                        streamFactory.createCheckpointStateOutputStream(
                                CheckpointedStateScope.EXCLUSIVE);
                registry.registerCloseable(out);
                out.write(BatchFormat.segmentHeader());
                BatchLocation location =
                        BatchFormat.write(
                                out,
                                segment,
                                BatchFormat.SEGMENT_HEADER_BYTES,
                                all.records(),
                                log.compression());
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
        new CheckpointManifest(captured.metadata, timers, batches)
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
     * Builds a capture's records. Should its logged changes turn out lost, this checkpoint fails,
     * and the next appends every live entry.
     */
    private void materialize(Capture capture) throws IOException {
        try {
            capture.materialize(lastBatchBytes);
        } catch (IOException e) {
            if (capture.lostChanges()) {
                requireFullCheckpoint();
            }
            throw e;
        }
    }

    /**
     * Appends every live entry of the captured tables as one batch, which refers to no earlier
     * one. Under the write lock.
     */
    private BatchLocation appendFull(CapturedState captured, Set<String> confirmed)
            throws IOException {
        long start = System.nanoTime();
        Capture all = captureTables(captured.checkpointId, captured);
        BatchLocation location = log.append(all.records(), confirmed);
        remember(captured.checkpointId, List.of(location), -1, true, null, all.records(), location);
        fullBatches.incrementAndGet();
        LOG.debug(
                "Checkpoint {} appended all {} live records ({} bytes) to state log segment {} at"
                        + " offset {} in {} ms",
                captured.checkpointId,
                all.records().recordCount(),
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

    private static Set<String> segmentsOf(List<BatchLocation> batches) {
        Set<String> segments = new LinkedHashSet<>();
        batches.forEach(b -> segments.add(b.segment()));
        return segments;
    }

    /** Serializes every entry of the table snapshots, key group by key group. */
    private Capture captureTables(long checkpointId, CapturedState captured) throws IOException {
        Capture all =
                new Capture(
                        checkpointId,
                        new BatchBuilder(checkpointId, keyGroupRange, captured.stateNames));
        for (int kg = keyGroupRange.getStartKeyGroup(); kg <= keyGroupRange.getEndKeyGroup(); kg++) {
            for (StateTableSnapshot table : captured.tables) {
                Iterator<StateEntry<Object, Object, Object>> entries =
                        table.snapshot.getIterator(kg);
                while (entries.hasNext()) {
                    StateEntry<Object, Object, Object> entry = entries.next();
                    all.add(
                            new EntryRef(table.stateId, entry.getKey(), entry.getNamespace(), kg),
                            table.serializers,
                            entry.getState());
                }
            }
        }
        all.materialize(null);
        return all;
    }

    /**
     * Keeps the checkpoint's batches, and the batch it appended for the index to learn, until it
     * completes or is aborted; not if that happened before its asynchronous phase ended (it timed
     * out), which would keep the batch until a later checkpoint completes.
     */
    private void remember(
            long checkpointId,
            List<BatchLocation> batches,
            long builtOn,
            boolean full,
            @Nullable CompactionResult compaction,
            BatchBuilder batch,
            @Nullable BatchLocation location) {
        synchronized (lock) {
            if (abandoned(checkpointId)) {
                return;
            }
            written.put(
                    checkpointId,
                    new WrittenCheckpoint(
                            batches,
                            builtOn,
                            full,
                            compaction,
                            location == null ? null : batch,
                            location));
        }
    }

    /** Whether the checkpoint can no longer complete: aborted, or a later one completed. */
    private boolean abandoned(long checkpointId) {
        return checkpointId <= lastCompleted || aborted.contains(checkpointId);
    }

    // ------------------------------------------------------------------------
    //  checkpoint notifications
    // ------------------------------------------------------------------------

    /**
     * The checkpoint whose log checkpoint {@code checkpointId} lists instead of the last completed
     * one's, or null. That is the latest checkpoint written before it, if its log lacks a segment
     * of the completed log other than through the pending compaction (it listed an earlier log,
     * its asynchronous phase coming before that completion reached the task, or the log of one
     * that did), yet holds every change of the completed log ({@link #holdsTheCompletedLog}).
     * Should it complete first, the JobManager drops the segments it lacks, and would refuse a
     * checkpoint listing them. Its segments that the completed log lacks are listed as
     * placeholders only once their checkpoint was given them: the JobManager then resolves them
     * to what that checkpoint's acknowledgement registered, or refuses this one should that
     * checkpoint be discarded unregistered. Should this one complete first, the index never
     * learned those, and the next checkpoint is full ({@link #indexCanFollow}).
     */
    @Nullable
    private WrittenCheckpoint pendingOnAnEarlierLog(long checkpointId) {
        Map.Entry<Long, WrittenCheckpoint> latest = written.lowerEntry(checkpointId);
        if (latest == null || latest.getValue().full) {
            return null;
        }
        WrittenCheckpoint earlier = latest.getValue();
        Set<String> listed = segmentsOf(earlier.batches);
        Set<String> replaced = replacedBy(earlier);
        boolean lacksACompletedSegment =
                base.stream()
                        .anyMatch(
                                b -> !listed.contains(b.segment()) && !replaced.contains(b.key()));
        Set<String> completed = segmentsOf(base);
        for (String segment : listed) {
            if (!completed.contains(segment) && !log.given(segment)) {
                return null;
            }
        }
        return lacksACompletedSegment && holdsTheCompletedLog(latest.getKey(), earlier)
                ? earlier
                : null;
    }

    /** The batches that the pending compaction replaced, if {@code checkpoint} applied it. */
    private Set<String> replacedBy(WrittenCheckpoint checkpoint) {
        return appliesPendingCompaction(checkpoint)
                ? pendingCompaction.replacedBatches()
                : Set.of();
    }

    private boolean appliesPendingCompaction(WrittenCheckpoint checkpoint) {
        return pendingCompaction != null && checkpoint.compaction == pendingCompaction;
    }

    /**
     * The pending compaction if checkpoint {@code checkpointId} applies it to {@code batches}, else
     * null. The first checkpoint to apply it takes it up and lists the run as its own; later
     * checkpoints list it as a placeholder (see {@link #followsTaker}). Without it, they would
     * list the segments it replaced as placeholders, and be refused once the taker completed.
     */
    @Nullable
    private CompactionResult compactionFor(List<BatchLocation> batches, long checkpointId) {
        if (pendingCompaction == null
                || !keys(batches).containsAll(pendingCompaction.replacedBatches())
                // A late asynchronous phase would take it up for nothing.
                || abandoned(checkpointId)) {
            return null;
        }
        if (pendingTakenUpBy < 0) {
            pendingTakenUpBy = checkpointId;
        } else if (pendingTakenUpBy != checkpointId && !followsTaker(checkpointId)) {
            return null;
        }
        return pendingCompaction;
    }

    /**
     * Whether a checkpoint may apply the compaction that another one took up: only a later one,
     * once the taker was given the run (its handle made). The JobManager resolves the later
     * checkpoint's placeholder to the handle the taker's acknowledgement registered, or refuses
     * it should the taker be discarded unregistered, deleting the run: so only the taker ever
     * deletes the run, and no checkpoint is left referring to a deleted one. An earlier
     * checkpoint (its asynchronous phase came late) can complete only if the taker does not, and
     * its acknowledgement may come before the taker's.
     */
    private boolean followsTaker(long checkpointId) {
        BatchLocation run = pendingCompaction.run();
        return pendingTakenUpBy < checkpointId && (run == null || log.given(run.segment()));
    }

    /** {@code batches} with {@code compaction}, if any, applied. */
    private static List<BatchLocation> withCompaction(
            List<BatchLocation> batches, @Nullable CompactionResult compaction) {
        if (compaction == null) {
            return new ArrayList<>(batches);
        }
        List<BatchLocation> result = new ArrayList<>();
        if (compaction.run() != null) {
            result.add(compaction.run());
        }
        for (BatchLocation batch : batches) {
            if (!compaction.replacedBatches().contains(batch.key())) {
                result.add(batch);
            }
        }
        return result;
    }

    private static Set<String> keys(List<BatchLocation> batches) {
        Set<String> keys = new HashSet<>();
        batches.forEach(b -> keys.add(b.key()));
        return keys;
    }

    /**
     * Offers a finished compaction; the next checkpoints use it. Refused, and its run dropped, if
     * the checkpoint the compactor read no longer underlies the log (a full checkpoint, a
     * concurrent pass), or while a full checkpoint is pending: the index then follows the full
     * batch, so the pass may have taken records of the log it read for dead. No other pass runs
     * until a completed checkpoint took the result up or it is dropped.
     */
    public boolean offerCompaction(CompactionResult result) {
        synchronized (lock) {
            if (pendingCompaction != null
                    || needsFull
                    || !keys(base).containsAll(result.replacedBatches())
                    || completedIntoDuringPass(result)) {
                drop(result.run(), false);
                return false;
            }
            pendingCompaction = result;
            pendingTakenUpBy = -1;
            if (result.run() != null) {
                // Counted from now on, when checkpoints that complete keep it (pruneIndex).
                index.batchAdded(result.run().segment(), result.run().rawLength());
            }
            return true;
        }
    }

    /**
     * Whether the log holds a batch in a compacted segment that the pass did not read: appended
     * before the segment rolled, by a checkpoint that completed during the pass. The index may
     * then have moved that batch's newer records into the run, since it knows segments, not
     * batches.
     */
    private boolean completedIntoDuringPass(CompactionResult result) {
        for (BatchLocation batch : base) {
            if (result.compactedSegments().contains(batch.segment())
                    && !result.replacedBatches().contains(batch.key())) {
                return true;
            }
        }
        return false;
    }

    /**
     * The next checkpoint appends every live entry, and only it or a later one ends that: the log
     * holds records that the current serializers cannot read (a state was registered again with
     * a serializer that needed migration), or changes were lost before reaching it.
     */
    public void requireFullCheckpoint() {
        synchronized (lock) {
            needsFull = true;
            // The next barrier sets it to its own id; no checkpoint taken before may end this.
            lastFull = Long.MAX_VALUE;
        }
    }

    /** Whether a compaction pass could be offered now: none pending, no full checkpoint pending. */
    public boolean mayCompact() {
        synchronized (lock) {
            return pendingCompaction == null && !needsFull;
        }
    }

    public void notifyCheckpointComplete(long checkpointId) {
        synchronized (lock) {
            WrittenCheckpoint completed = written.get(checkpointId);
            if (completed == null) {
                return;
            }
            if (!indexCanFollow(completed)) {
                LOG.info(
                        "Checkpoint {} completed on a log that lacks changes the log of checkpoint"
                                + " {} held, or holds batches of a checkpoint that never completed;"
                                + " the next checkpoint is full, and compaction waits for it",
                        checkpointId,
                        lastCompleted);
                requireFullCheckpoint();
                if (pendingCompaction != null) {
                    // Its pass judged records by the index of the log left behind.
                    dropCompaction(keys(completed.batches));
                }
            }
            base = completed.batches;
            if (completed.appendedAt != null) {
                carried.put(
                        completed.appendedAt.key(), CarriedChanges.of(completed, checkpointId));
            }
            carried.keySet().retainAll(keys(base));
            if (completed.appendedAt != null) {
                // Under the lock, with base: the index counts the segment from now on, and no
                // compaction pass judges the completed log before the index knows its batch.
                index.batchWrittenLater(
                        completed.appended, completed.appendedAt, completed.full, background);
            }
            settleCompaction(checkpointId);
            for (Iterator<Capture> it = pending.iterator(); it.hasNext(); ) {
                Capture c = it.next();
                if (c.checkpointId <= checkpointId) {
                    it.remove();
                    if (!c.claimed) {
                        // Never written (no asynchronous phase took it up): the buffers are reused.
                        c.discardLogged(background);
                    }
                }
            }
            written.headMap(checkpointId, true).clear();
            lastCompleted = checkpointId;
            aborted.removeIf(id -> id <= checkpointId);
            if (completed.full && checkpointId >= lastFull) {
                needsFull = false;
            }
            pruneIndex();
        }
    }

    /**
     * Whether the index, which learned the batches of the checkpoints completed so far, follows
     * the log to {@code completed}'s once it learns that one's batch: its log holds no batch that
     * the index never learned but its own and the run of the pending compaction it applied, and
     * every batch of the current log that it lacks is replaced by that compaction or carries only
     * changes that its own batch carries again, which the index learns there. Not so when its
     * asynchronous phase listed an earlier log than a checkpoint completed since had built on (a
     * completion reached the task after the barrier), or the log of a checkpoint that never
     * completed: the log then lacks batches or a compaction run that the index follows, or holds
     * records the index does not know of, and compaction would take records of the log for dead.
     */
    private boolean indexCanFollow(WrittenCheckpoint completed) {
        if (completed.full) {
            return true;
        }
        Set<String> unknown = keys(completed.batches);
        unknown.removeAll(keys(base));
        if (completed.appendedAt != null) {
            unknown.remove(completed.appendedAt.key());
        }
        if (appliesPendingCompaction(completed) && pendingCompaction.run() != null) {
            unknown.remove(pendingCompaction.run().key());
        }
        return unknown.isEmpty() && lacksOnlyChangesAfter(completed, completed.builtOn);
    }

    /**
     * Whether checkpoint {@code checkpointId}'s log holds every change of the last completed one:
     * the batches it lists, and its own (empty, if it appended none), carry again what the batches
     * of the completed log that it lacks carry ({@link CarriedChanges}). A completion that reached
     * the task after the barrier leaves a checkpoint on an earlier log, whose batches carry
     * changes from before the completed one's.
     */
    private boolean holdsTheCompletedLog(long checkpointId, WrittenCheckpoint checkpoint) {
        Map<String, CarriedChanges> appended = new HashMap<>(carried);
        written.forEach(
                (id, other) -> {
                    if (other.appendedAt != null) {
                        appended.put(other.appendedAt.key(), CarriedChanges.of(other, id));
                    }
                });
        List<CarriedChanges> intervals = new ArrayList<>();
        intervals.add(CarriedChanges.of(checkpoint, checkpointId));
        for (BatchLocation batch : checkpoint.batches) {
            CarriedChanges interval = appended.get(batch.key());
            if (interval != null) {
                intervals.add(interval);
            }
        }
        return lacksOnlyChangesAfter(
                checkpoint, CarriedChanges.carriedSince(lastCompleted, intervals));
    }

    /**
     * Whether every batch of the last completed log that {@code checkpoint}'s log lacks is
     * replaced by the pending compaction it applied, or carries only changes after the barrier
     * of checkpoint {@code since}.
     */
    private boolean lacksOnlyChangesAfter(WrittenCheckpoint checkpoint, long since) {
        Set<String> listed = keys(checkpoint.batches);
        Set<String> replaced = replacedBy(checkpoint);
        for (BatchLocation batch : base) {
            String key = batch.key();
            if (listed.contains(key) || replaced.contains(key)) {
                continue;
            }
            CarriedChanges lacked = carried.get(key);
            if (lacked == null || lacked.after < since) {
                return false;
            }
        }
        return true;
    }

    /**
     * Clears the pending compaction once a completed checkpoint took it up or made it moot, or
     * once a later checkpoint completed without it after an earlier one took it up: the earlier
     * one can no longer complete, and the task may discard it, run and all.
     */
    private void settleCompaction(long completedId) {
        if (pendingCompaction == null) {
            return;
        }
        Set<String> current = keys(base);
        boolean takenUpByAnAbandonedCheckpoint =
                pendingTakenUpBy >= 0 && pendingTakenUpBy < completedId;
        if (current.containsAll(pendingCompaction.replacedBatches())
                && !takenUpByAnAbandonedCheckpoint) {
            return;
        }
        dropCompaction(current);
    }

    /**
     * Forgets the pending compaction. Its run stays if {@code current}, the completed log, holds
     * it; else it is dropped. Should a checkpoint that listed it complete all the same (the
     * completed log is then not one it built on), {@link #indexCanFollow} judges the log it
     * leaves behind.
     */
    private void dropCompaction(Set<String> current) {
        BatchLocation run = pendingCompaction.run();
        if (run != null && current.contains(run.key())) {
            index.runTaken(run.segment());
        } else {
            drop(run, pendingTakenUpBy >= 0);
        }
        pendingCompaction = null;
        pendingTakenUpBy = -1;
    }

    /**
     * A run that the log will not hold: the entries the index moved into it move back. If no
     * checkpoint {@code listed} it, it is deleted. Else the checkpoint that took it up, still
     * writing perhaps, gives it to Flink with its handle, and Flink deletes it with that
     * checkpoint; should that checkpoint fail before, the log deletes it when it closes.
     */
    private void drop(@Nullable BatchLocation run, boolean listed) {
        if (run != null) {
            if (!listed) {
                log.discardRun(run.segment());
            }
            index.runDropped(run.segment(), background);
        }
    }

    /** The index stops counting segments that no checkpoint of this backend can refer to. */
    private void pruneIndex() {
        Set<String> referenced = new HashSet<>();
        base.forEach(b -> referenced.add(b.segment()));
        written.values().forEach(c -> c.batches.forEach(b -> referenced.add(b.segment())));
        if (pendingCompaction != null && pendingCompaction.run() != null) {
            referenced.add(pendingCompaction.run().segment());
        }
        String active = log.activeSegment();
        if (active != null) {
            referenced.add(active);
        }
        index.retain(referenced);
    }

    public void notifyCheckpointAborted(long checkpointId) {
        synchronized (lock) {
            written.remove(checkpointId);
            if (checkpointId > lastCompleted) {
                aborted.add(checkpointId);
            }
            // The aborted checkpoint may be discarded unregistered, taking the run along; a later
            // pass compacts again.
            if (pendingCompaction != null && pendingTakenUpBy == checkpointId) {
                dropCompaction(keys(base));
            }
        }
    }

    /** The batches that the next incremental checkpoint builds on. */
    public List<BatchLocation> baseBatches() {
        synchronized (lock) {
            return new ArrayList<>(base);
        }
    }
}
