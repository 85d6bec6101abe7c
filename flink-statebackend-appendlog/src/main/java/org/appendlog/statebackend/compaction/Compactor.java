package org.appendlog.statebackend.compaction;

import org.appendlog.statebackend.CompactionSettings;
import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.index.SegmentSet;
import org.appendlog.statebackend.index.SegmentStats;
import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.KeyGroupRecords;
import org.appendlog.statebackend.log.LogScanner;
import org.appendlog.statebackend.log.LogScanner.Batch;
import org.appendlog.statebackend.log.RecordCursor;
import org.appendlog.statebackend.log.SegmentedLog;

import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.KeyGroupRange;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * The log cleaner: on its own thread, never the task's, it rewrites the live records of the
 * dirtiest segments into a compacted run and offers the result to the snapshot strategy, whose
 * next checkpoint refers to the run instead of the replaced batches. Flink's shared state registry
 * then deletes the old segments once no retained checkpoint needs them.
 *
 * <p>Liveness comes from the index, so nothing is scanned to find it: a value record is copied if
 * it is its entry's latest record and the index places that record in a compacted segment. A
 * tombstone is copied while a batch the checkpoint keeps may hold an older record of its entry.
 * Records keep their checkpoint ids, so restore's "latest wins" holds with runs in any order.
 */
public final class Compactor implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(Compactor.class);

    /** Upper bound of one pass's input, so that a pass stays short and its run moderate. */
    private static final long MAX_INPUT_BYTES = 256L << 20;

    private final CompactionSettings settings;
    private final CompactionPolicy policy;
    private final SegmentedLog log;
    private final LogIndex index;
    private final KeyGroupRange owned;
    private final Predicate<CompactionResult> taker;
    private final ExecutorService thread;
    private final AtomicBoolean running = new AtomicBoolean();

    private final AtomicLong passes = new AtomicLong();
    private final AtomicLong bytesRead = new AtomicLong();
    private final AtomicLong bytesWritten = new AtomicLong();
    private volatile long lastDurationMillis;

    /**
     * @param taker receives each finished pass; returns false if the log moved on meanwhile and
     *     the result can no longer be used
     */
    public Compactor(
            CompactionSettings settings,
            SegmentedLog log,
            LogIndex index,
            KeyGroupRange owned,
            Predicate<CompactionResult> taker,
            MetricGroup metrics) {
        this.settings = settings;
        this.policy =
                new CompactionPolicy(settings.minDirtyRatio(), settings.minLag(), MAX_INPUT_BYTES);
        this.log = log;
        this.index = index;
        this.owned = owned;
        this.taker = taker;
        this.thread =
                Executors.newSingleThreadExecutor(
                        r -> {
                            Thread t = new Thread(r, "appendlog-compactor " + owned);
                            t.setDaemon(true);
                            return t;
                        });
        metrics.gauge("compactionsRun", passes::get);
        metrics.gauge("compactionBytesRead", bytesRead::get);
        metrics.gauge("compactionBytesWritten", bytesWritten::get);
        metrics.gauge("lastCompactionDurationMs", () -> lastDurationMillis);
    }

    /** Starts a pass over {@code input} unless one is running; returns at once. */
    public void maybeStart(CompactionInput input) {
        if (!running.compareAndSet(false, true)) {
            return;
        }
        thread.execute(
                () -> {
                    try {
                        pass(input);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (Throwable t) {
                        // The log stays as it was: every checkpoint remains as restorable as before.
                        if (thread.isShutdown()) {
                            // close() interrupted the pass (the task was cancelled or fails over);
                            // the file system reports that as an error of its own.
                            LOG.info(
                                    "Compaction of the state log in {} stopped: the backend is closing ({})",
                                    log.directory(),
                                    t.toString());
                        } else {
                            LOG.warn("Compaction of the state log in {} failed", log.directory(), t);
                        }
                    } finally {
                        running.set(false);
                    }
                });
    }

    public boolean isRunning() {
        return running.get();
    }

    /** Passes that finished, whether or not they found anything live. */
    public long passes() {
        return passes.get();
    }

    private void pass(CompactionInput input) throws Exception {
        long start = System.nanoTime();
        index.awaitUpdates();
        Set<String> referenced = BatchLocation.segmentsOf(input.batches);
        String active = log.activeSegment();
        List<SegmentStats> closed = new ArrayList<>();
        for (String segment : referenced) {
            SegmentStats stats = index.stats(segment);
            if (stats != null && !segment.equals(active)) {
                closed.add(stats);
            }
        }
        List<SegmentStats> chosen = policy.select(closed, System.currentTimeMillis());
        if (chosen.isEmpty()) {
            return;
        }
        Set<String> compactedNames = new HashSet<>();
        chosen.forEach(s -> compactedNames.add(s.segment()));
        SegmentSet compacted = index.segmentSet(compactedNames);
        Map<String, BatchLocation> replaced = new LinkedHashMap<>();
        List<BatchLocation> kept = new ArrayList<>();
        for (BatchLocation batch : input.batches) {
            if (compactedNames.contains(batch.segment())) {
                replaced.put(batch.key(), batch);
            } else {
                kept.add(batch);
            }
        }
        List<BatchLocation> toRead = new ArrayList<>();
        for (BatchLocation batch : replaced.values()) {
            if (batch.keyGroups().getIntersection(owned).getNumberOfKeyGroups() > 0) {
                toRead.add(batch);
            }
        }
        List<Batch> batches = LogScanner.openBatches(toRead, log::handle);
        IoThrottle throttle = new IoThrottle(settings.ioRateLimit());
        long runCheckpoint =
                replaced.values().stream().mapToLong(BatchLocation::checkpointId).max().orElse(0);
        List<Slice> slices =
                LogScanner.forEachSlice(
                        owned,
                        settings.threads(),
                        "appendlog-compactor " + owned,
                        slice ->
                                compactSlice(
                                        slice,
                                        batches,
                                        kept,
                                        compacted,
                                        input,
                                        throttle,
                                        runCheckpoint));

        BatchBuilder run = new BatchBuilder(runCheckpoint, owned, input.stateNames);
        long read = 0;
        for (Slice slice : slices) {
            run.takeAll(slice.records);
            read += slice.bytesRead;
        }
        BatchLocation location = null;
        if (run.recordCount() > 0) {
            location = log.writeRun(run);
            throttle.acquire(location.length());
            // Before the offer, so that the offer sees every checkpoint that completed meanwhile.
            index.moved(run, compacted, location.segment());
        }
        CompactionResult result = new CompactionResult(compactedNames, replaced.keySet(), location);
        boolean taken = taker.test(result);
        passes.incrementAndGet();
        bytesRead.addAndGet(read);
        bytesWritten.addAndGet(location == null ? 0 : location.length());
        lastDurationMillis = (System.nanoTime() - start) / 1_000_000;
        LOG.info(
                "Compacted {} segment(s), {} batch(es), {} bytes read, into {} in {} ms{}",
                compactedNames.size(),
                replaced.size(),
                read,
                location == null ? "nothing (no live records)" : location,
                lastDurationMillis,
                taken ? "" : "; the log moved on meanwhile, result dropped");
    }

    /** The live records of one key-group slice. */
    private static final class Slice {
        final BatchBuilder records;
        long bytesRead;

        Slice(BatchBuilder records) {
            this.records = records;
        }
    }

    /** The records of one key group in one batch, as read: they are walked where they lie. */
    private static final class Piece {
        final Batch batch;
        /** Per state id of the batch, the state's id in this backend; -1 if it has none. */
        final int[] stateIds;
        final KeyGroupRecords records;

        Piece(Batch batch, int[] stateIds, KeyGroupRecords records) {
            this.batch = batch;
            this.stateIds = stateIds;
            this.records = records;
        }

        /** The backend's id of the state of the record under {@code cursor}. */
        int state(RecordCursor cursor) throws IOException {
            int id = cursor.stateId();
            String name = batch.stateName(cursor);
            if (stateIds[id] < 0) {
                throw new IOException("State '" + name + "' in " + batch.file() + " is unknown");
            }
            return stateIds[id];
        }
    }

    private static int[] stateIds(Batch batch, Map<String, Integer> ids) {
        List<String> names = batch.index.stateNames;
        int[] result = new int[names.size()];
        for (int i = 0; i < result.length; i++) {
            result[i] = ids.getOrDefault(names.get(i), -1);
        }
        return result;
    }

    private Slice compactSlice(
            KeyGroupRange slice,
            List<Batch> batches,
            List<BatchLocation> kept,
            SegmentSet compacted,
            CompactionInput input,
            IoThrottle throttle,
            long runCheckpoint)
            throws Exception {
        int firstKg = slice.getStartKeyGroup();
        List<List<Piece>> perKeyGroup = new ArrayList<>();
        for (int kg = firstKg; kg <= slice.getEndKeyGroup(); kg++) {
            perKeyGroup.add(new ArrayList<>());
        }
        Map<Batch, int[]> stateIds = new IdentityHashMap<>();
        Function<Batch, int[]> mapStates = batch -> stateIds(batch, input.stateIds);
        long read =
                LogScanner.read(
                        batches,
                        slice,
                        throttle::acquire,
                        (batch, kg, records) ->
                                perKeyGroup
                                        .get(kg - firstKg)
                                        .add(
                                                new Piece(
                                                        batch,
                                                        stateIds.computeIfAbsent(batch, mapStates),
                                                        records)));
        Slice result = new Slice(new BatchBuilder(runCheckpoint, owned, input.stateNames));
        result.bytesRead = read;
        RecordCursor cursor = new RecordCursor();
        LatestRecords tombstones = new LatestRecords();
        LatestRecords latest = new LatestRecords();
        for (int kg = firstKg; kg <= slice.getEndKeyGroup(); kg++) {
            List<Piece> pieces = perKeyGroup.get(kg - firstKg);
            if (pieces.isEmpty()) {
                continue;
            }
            // Per entry, the candidate is its latest record here (highest checkpoint id, of equal
            // ones the later read); a value candidate is copied if the index places the entry's
            // latest record in a compacted segment, a tombstone if an older record may remain.
            // Most records are dead, so a value record whose entry the index places elsewhere is
            // skipped before deduplication: as the candidate it would be dropped. It still
            // competes only if its entry has a tombstone here, which it may outrank and so keep
            // from being copied; hence tombstones are gathered first. The index moves entries out
            // of the compacted segments, never in, so every record of an entry that is copied
            // gets offered: the same candidates, in the same (first read) order, as when every
            // record was deduplicated. A value candidate without a tombstone here was offered
            // because the index placed it here, so it is not asked again: should a checkpoint
            // overwrite the entry meanwhile, the copy is merely dead, and the index, which moves
            // only entries still in the compacted segments, counts it so.
            tombstones.clear();
            int records = 0;
            for (Piece piece : pieces) {
                cursor.reset(piece.records);
                while (cursor.next()) {
                    records++;
                    if (cursor.isTombstone()) {
                        tombstones.offer(
                                piece.state(cursor),
                                cursor.bytes(),
                                cursor.keyOffset(),
                                cursor.keyLength(),
                                cursor.checkpointId(),
                                cursor.offset());
                    }
                }
            }
            latest.clear();
            index.warm(kg, records);
            for (int p = 0; p < pieces.size(); p++) {
                Piece piece = pieces.get(p);
                cursor.reset(piece.records);
                while (cursor.next()) {
                    int state = piece.state(cursor);
                    byte[] bytes = cursor.bytes();
                    int keyOffset = cursor.keyOffset();
                    int keyLength = cursor.keyLength();
                    if (cursor.isTombstone()
                            || latestIn(compacted, kg, state, bytes, keyOffset, keyLength)
                            || hasTombstone(tombstones, state, cursor)) {
                        latest.offer(
                                state,
                                bytes,
                                keyOffset,
                                keyLength,
                                cursor.checkpointId(),
                                ((long) p << 32) | cursor.offset());
                    }
                }
            }
            for (int entry = 0; entry < latest.size(); entry++) {
                long position = latest.position(entry);
                cursor.reset(pieces.get((int) (position >>> 32)).records, (int) position).next();
                int state = latest.state(entry);
                boolean tombstone = cursor.isTombstone();
                boolean copy =
                        tombstone
                                ? olderRecordMayRemain(kept, kg, cursor.checkpointId())
                                : !hasTombstone(tombstones, state, cursor)
                                        || latestIn(
                                                compacted,
                                                kg,
                                                state,
                                                cursor.bytes(),
                                                cursor.keyOffset(),
                                                cursor.keyLength());
                if (copy) {
                    result.records.add(
                            kg,
                            cursor.checkpointId(),
                            state,
                            cursor.bytes(),
                            cursor.keyOffset(),
                            cursor.keyLength(),
                            tombstone ? null : cursor.bytes(),
                            cursor.valueOffset(),
                            tombstone ? 0 : cursor.valueLength());
                }
            }
        }
        return result;
    }

    /** Whether the entry of the record under {@code cursor} has a tombstone here. */
    private static boolean hasTombstone(LatestRecords tombstones, int state, RecordCursor cursor) {
        return !tombstones.isEmpty()
                && tombstones.contains(
                        state, cursor.bytes(), cursor.keyOffset(), cursor.keyLength());
    }

    /** Whether the index places the entry's latest record in a compacted segment. */
    private boolean latestIn(
            SegmentSet compacted, int kg, int state, byte[] key, int offset, int length) {
        return index.latestIn(compacted, kg, state, key, offset, length);
    }

    /** Whether a batch that stays may hold a record of key group {@code kg} older than {@code id}. */
    private static boolean olderRecordMayRemain(List<BatchLocation> kept, int kg, long id) {
        for (BatchLocation batch : kept) {
            if (batch.keyGroups().contains(kg) && batch.minCheckpointId() < id) {
                return true;
            }
        }
        return false;
    }

    @Override
    public void close() {
        thread.shutdownNow();
        try {
            thread.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
