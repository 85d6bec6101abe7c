package org.appendlog.statebackend.compaction;

import org.appendlog.statebackend.CompactionSettings;
import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.index.SegmentStats;
import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.KeyBytes;
import org.appendlog.statebackend.log.LogRecord;
import org.appendlog.statebackend.log.LogScanner;
import org.appendlog.statebackend.log.LogScanner.Batch;
import org.appendlog.statebackend.log.LogScanner.ScannedRecord;
import org.appendlog.statebackend.log.SegmentedLog;

import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.KeyGroupRange;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
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
                        LOG.warn("Compaction of the state log in {} failed", log.directory(), t);
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
        Set<String> referenced = new HashSet<>();
        input.batches.forEach(b -> referenced.add(b.segment()));
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
        Set<String> compacted = new HashSet<>();
        chosen.forEach(s -> compacted.add(s.segment()));
        Map<String, BatchLocation> replaced = new LinkedHashMap<>();
        List<BatchLocation> kept = new ArrayList<>();
        for (BatchLocation batch : input.batches) {
            if (compacted.contains(batch.segment())) {
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
                        slice -> compactSlice(slice, batches, kept, compacted, input, throttle, runCheckpoint));

        BatchBuilder run = new BatchBuilder(runCheckpoint, owned, input.stateNames);
        long read = 0;
        for (Slice slice : slices) {
            run.appendAll(slice.records);
            read += slice.bytesRead;
        }
        BatchLocation location = null;
        if (run.recordCount() > 0) {
            location = log.writeRun(run);
            throttle.acquire(location.length());
            String runSegment = location.segment();
            index.batchAdded(runSegment, location.length());
            run.forEachRecord(
                    (keyGroup, state, bytes, keyOffset, keyLength, length, tombstone) -> {
                        if (!tombstone) {
                            index.moved(
                                    keyGroup, state, bytes, keyOffset, keyLength, compacted,
                                    runSegment, length);
                        }
                    });
        }
        passes.incrementAndGet();
        bytesRead.addAndGet(read);
        bytesWritten.addAndGet(location == null ? 0 : location.length());
        lastDurationMillis = (System.nanoTime() - start) / 1_000_000;
        CompactionResult result = new CompactionResult(replaced.keySet(), location);
        boolean taken = taker.test(result);
        LOG.info(
                "Compacted {} segment(s), {} batch(es), {} bytes read, into {} in {} ms{}",
                compacted.size(),
                replaced.size(),
                read,
                location == null ? "nothing (no live records)" : location,
                lastDurationMillis,
                taken ? "" : "; the log moved on meanwhile, result dropped");
        if (!taken && location != null) {
            log.discardRun(location.segment());
        }
    }

    /** The live records of one key-group slice. */
    private static final class Slice {
        final BatchBuilder records;
        long bytesRead;

        Slice(BatchBuilder records) {
            this.records = records;
        }
    }

    /** An entry as its records identify it: state and serialized key and namespace. */
    private static final class EntryKey {
        final int state;
        final byte[] keyAndNamespace;
        final int hash;

        EntryKey(int state, byte[] keyAndNamespace) {
            this.state = state;
            this.keyAndNamespace = keyAndNamespace;
            this.hash = KeyBytes.hash(state, keyAndNamespace, 0, keyAndNamespace.length);
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof EntryKey)) {
                return false;
            }
            EntryKey other = (EntryKey) o;
            return hash == other.hash
                    && state == other.state
                    && Arrays.equals(keyAndNamespace, other.keyAndNamespace);
        }

        @Override
        public int hashCode() {
            return hash;
        }
    }

    private Slice compactSlice(
            KeyGroupRange slice,
            List<Batch> batches,
            List<BatchLocation> kept,
            Set<String> compacted,
            CompactionInput input,
            IoThrottle throttle,
            long runCheckpoint)
            throws Exception {
        long[] read = {0};
        Map<Integer, List<ScannedRecord>> perKeyGroup =
                LogScanner.scan(batches, slice, throttle::acquire, read);
        Slice result = new Slice(new BatchBuilder(runCheckpoint, owned, input.stateNames));
        result.bytesRead = read[0];
        for (int kg = slice.getStartKeyGroup(); kg <= slice.getEndKeyGroup(); kg++) {
            List<ScannedRecord> records = perKeyGroup.get(kg);
            if (records == null) {
                continue;
            }
            // Per entry, the latest record among the compacted batches.
            Map<EntryKey, ScannedRecord> latest = new LinkedHashMap<>();
            for (ScannedRecord r : records) {
                String name = r.stateName();
                Integer id = input.stateIds.get(name);
                if (id == null) {
                    throw new IOException("State '" + name + "' in " + r.batch.file() + " is unknown");
                }
                EntryKey entry = new EntryKey(id, r.record.keyAndNamespace);
                ScannedRecord previous = latest.get(entry);
                if (previous == null || previous.record.checkpointId <= r.record.checkpointId) {
                    latest.put(entry, r);
                }
            }
            for (Map.Entry<EntryKey, ScannedRecord> e : latest.entrySet()) {
                EntryKey entry = e.getKey();
                LogRecord record = e.getValue().record;
                byte[] key = record.keyAndNamespace;
                boolean copy =
                        record.isTombstone()
                                ? olderRecordMayRemain(kept, kg, record.checkpointId)
                                : compacted.contains(
                                        index.latestSegment(kg, entry.state, key, 0, key.length));
                if (copy) {
                    result.records.add(
                            kg,
                            record.checkpointId,
                            entry.state,
                            key,
                            0,
                            key.length,
                            record.value,
                            0,
                            record.value == null ? 0 : record.value.length);
                }
            }
        }
        return result;
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
