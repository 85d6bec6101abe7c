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

package org.appendlog.statebackend.index;

import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.LogScanner;
import org.appendlog.statebackend.log.RecordCursor;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.Executor;

/**
 * The "indexed" part of the log (cf. Bitcask's keydir): where the latest record of every live
 * entry lives (segment, batch, position in its key group), and from that, per segment, how many
 * of its bytes are still live. Compaction picks segments by these numbers without scanning them,
 * and copies the live records the index lists without asking about the dead ones. Entries are
 * identified by their state and serialized key and namespace, exactly as the records carry them.
 */
public final class LogIndex {

    private static final Logger LOG = LoggerFactory.getLogger(LogIndex.class);

    private final KeyGroupRange keyGroups;
    private final KeyGroupIndex[] perKeyGroup;
    private final Segments segments = new Segments();
    private final ConcurrentHashMap<String, SegmentStats> referenced = new ConcurrentHashMap<>();
    /**
     * Runs that entries were moved into, by segment number, until a completed checkpoint holds
     * them or they are dropped ({@link RunMoves}). Guards itself.
     */
    private final Map<Integer, RunMoves> openRuns = new HashMap<>();

    /** Guards the count of index updates still running, and the first that failed. */
    private final Object updates = new Object();
    private int pendingUpdates;
    private Throwable failedUpdate;

    public LogIndex(KeyGroupRange keyGroups) {
        this.keyGroups = keyGroups;
        this.perKeyGroup = new KeyGroupIndex[keyGroups.getNumberOfKeyGroups()];
        for (int i = 0; i < perKeyGroup.length; i++) {
            perKeyGroup[i] = new KeyGroupIndex(segments);
        }
    }

    /** Segment numbers, so that an entry stores an int rather than a reference per record. */
    static final class Segments {
        private volatile SegmentStats[] byId = new SegmentStats[16];
        private final ConcurrentHashMap<String, Integer> ids = new ConcurrentHashMap<>();
        private int next;

        SegmentStats byId(int id) {
            return byId[id];
        }

        int idOf(String segment) {
            Integer id = ids.get(segment);
            return id != null ? id : register(segment);
        }

        private synchronized int register(String segment) {
            Integer id = ids.get(segment);
            if (id != null) {
                return id;
            }
            if (next == byId.length) {
                byId = Arrays.copyOf(byId, next * 2);
            }
            byId[next] = new SegmentStats(segment);
            ids.put(segment, next);
            return next++;
        }
    }

    KeyGroupIndex of(int keyGroup) {
        return perKeyGroup[keyGroup - keyGroups.getStartKeyGroup()];
    }

    int segmentId(String segment) {
        return segments.idOf(segment);
    }

    SegmentStats segmentStats(int id) {
        return segments.byId(id);
    }

    /**
     * Rebuilds the index from restored records, read newest first, on one restore thread; the
     * threads must read disjoint key groups.
     */
    public IndexRebuild rebuild() {
        return new IndexRebuild(this);
    }

    /**
     * Records that the latest record of an entry, {@code length} bytes, is now at {@code position}
     * in batch {@code batch}; a tombstone removes the entry. The record-by-record form of {@link
     * #batchWritten}, against which tests check the batched and the restored index.
     */
    void recordWritten(
            int keyGroup,
            int state,
            byte[] key,
            int offset,
            int keyLength,
            BatchLocation batch,
            int position,
            int length,
            boolean tombstone) {
        RecordAt at = placeOf(batch).record(position, length);
        if (tombstone) {
            segments.byId(at.segment).tombstoneIndexed();
        }
        of(keyGroup).written(state, key, offset, keyLength, at, tombstone);
    }

    /** The segment and batch numbers of {@code batch}, for the places of its records. */
    RecordAt placeOf(BatchLocation batch) {
        int segment = segmentId(batch.segment());
        int number = segments.byId(segment).batchNumber(batch.offset());
        return new RecordAt().set(segment, number, 0, 0);
    }

    /** Indexes every record of {@code batch}, which now lives at {@code location}. */
    void batchWritten(BatchBuilder batch, BatchLocation location) throws IOException {
        forEachRecord(batch, recordIndexer(location));
    }

    /** Indexes each record it is handed as the latest of its entry, in {@code location}. */
    private IndexedRecordVisitor recordIndexer(BatchLocation location) {
        RecordAt at = placeOf(location);
        SegmentStats stats = segments.byId(at.segment);
        return (index, position, state, bytes, keyOffset, keyLength, length, tombstone) -> {
            if (tombstone) {
                stats.tombstoneIndexed();
            }
            index.written(
                    state, bytes, keyOffset, keyLength, at.record(position, length), tombstone);
        };
    }

    /**
     * Indexes every record of the batch at {@code location} of {@code segment}, read back from
     * the log key group by key group: a full batch is written as a stream, and its records are
     * not kept on the heap until its checkpoint completes.
     */
    private void batchReadBack(StreamStateHandle segment, BatchLocation location)
            throws IOException {
        IndexedRecordVisitor indexer = recordIndexer(location);
        RecordCursor cursor = new RecordCursor();
        String file = LogScanner.describe(segment);
        try (FSDataInputStream in = segment.openInputStream()) {
            BatchFormat.BatchIndex batch = BatchFormat.readIndex(in, file, location);
            for (int keyGroup : location.keyGroups()) {
                KeyGroupIndex index = of(keyGroup);
                BatchFormat.readKeyGroups(
                        in,
                        file,
                        batch,
                        keyGroup,
                        keyGroup,
                        (kg, records) -> {
                            cursor.reset(records);
                            while (cursor.next()) {
                                indexer.accept(
                                        index,
                                        cursor.positionInKeyGroup(),
                                        cursor.stateId(),
                                        cursor.bytes(),
                                        cursor.keyOffset(),
                                        cursor.keyLength(),
                                        cursor.encodedLength(),
                                        cursor.isTombstone());
                            }
                        });
            }
        }
    }

    /** Receives one record of a batch together with the table of its key group. */
    @FunctionalInterface
    private interface IndexedRecordVisitor {
        void accept(
                KeyGroupIndex index,
                int position,
                int state,
                byte[] bytes,
                int keyOffset,
                int keyLength,
                int length,
                boolean tombstone);
    }

    /** Visits a batch's records key group by key group, warming each group's table first. */
    private void forEachRecord(BatchBuilder batch, IndexedRecordVisitor visitor)
            throws IOException {
        for (int keyGroup : batch.keyGroups()) {
            KeyGroupIndex index = of(keyGroup);
            index.warmFor(batch.recordCount(keyGroup));
            batch.forEachRecord(
                    keyGroup,
                    (kg, position, state, bytes, keyOffset, keyLength, length, tombstone) ->
                            visitor.accept(
                                    index,
                                    position,
                                    state,
                                    bytes,
                                    keyOffset,
                                    keyLength,
                                    length,
                                    tombstone));
        }
    }

    /**
     * Counts {@code batch}'s bytes now and indexes its records on {@code executor}, so that the
     * task's notification of the completed checkpoint that appended it need not wait; {@link
     * #awaitUpdates} waits for them. Only batches of completed checkpoints, in the order they
     * completed: the index describes the log the last completed checkpoint refers to.
     */
    public void indexBatchLater(BatchBuilder batch, BatchLocation location, Executor executor) {
        batchAdded(location.segment(), location.rawLength());
        updateLater(
                executor,
                () -> batchWritten(batch, location),
                "Could not index batch " + location + "; compaction stops");
    }

    /**
     * Like {@link #indexBatchLater}, for a batch of every live entry at {@code location} of
     * {@code segment}, which is read back from the log. It replaces what the index held: it
     * carries no tombstones for the entries removed before it, which would otherwise stay indexed
     * for good. So once indexed, the index is whole again, whatever update failed before. Should
     * reading it back fail (say a later checkpoint completed first and Flink deleted the segment),
     * {@code requestFullBatch} asks for the next checkpoint to be full, and compaction waits for
     * that one.
     */
    public void indexFullBatchLater(
            StreamStateHandle segment,
            BatchLocation location,
            Executor executor,
            Runnable requestFullBatch) {
        batchAdded(location.segment(), location.rawLength());
        updateLater(
                executor,
                () -> {
                    for (KeyGroupIndex index : perKeyGroup) {
                        index.clear();
                    }
                    try {
                        batchReadBack(segment, location);
                    } catch (IOException | RuntimeException e) {
                        requestFullBatch.run();
                        throw e;
                    }
                    synchronized (updates) {
                        failedUpdate = null;
                    }
                },
                "Could not index full batch "
                        + location
                        + " of "
                        + LogScanner.describe(segment)
                        + "; the next checkpoint is full, and compaction waits for it");
    }

    /** An index update, which may fail. */
    @FunctionalInterface
    private interface Update {
        void run() throws IOException;
    }

    /**
     * Runs {@code update} on {@code executor}, counted until it is done ({@link #awaitUpdates});
     * should it fail, compaction stops, since it would judge liveness by an index that missed it.
     */
    private void updateLater(Executor executor, Update update, String failure) {
        synchronized (updates) {
            pendingUpdates++;
        }
        try {
            executor.execute(
                    () -> {
                        try {
                            update.run();
                        } catch (Throwable t) {
                            if (Thread.currentThread().isInterrupted()) {
                                // The backend's dispose interrupted a batch being read back.
                                LOG.debug("{}: interrupted, the backend closes", failure, t);
                            } else {
                                LOG.error(failure, t);
                            }
                            updateFailed(t);
                        } finally {
                            updateDone();
                        }
                    });
        } catch (RuntimeException e) {
            updateDone();
            throw e;
        }
    }

    /**
     * The index no longer describes the log: every later pass fails at {@link #awaitUpdates}, until
     * a full batch is indexed.
     */
    private void updateFailed(Throwable t) {
        synchronized (updates) {
            if (failedUpdate == null) {
                failedUpdate = t;
            }
        }
    }

    private void updateDone() {
        synchronized (updates) {
            pendingUpdates--;
            updates.notifyAll();
        }
    }

    /**
     * Waits until every batch handed to {@link #indexBatchLater} is indexed. Compaction calls
     * it before it judges liveness: a record the index does not know yet would look dead.
     */
    public void awaitUpdates() throws IOException, InterruptedException {
        synchronized (updates) {
            while (pendingUpdates > 0) {
                updates.wait();
            }
            if (failedUpdate != null) {
                throw new IOException("The state log's index missed an update", failedUpdate);
            }
        }
    }

    /** The batches a compaction pass replaces, numbered in the order given. */
    public CompactedBatches compactedBatches(List<BatchLocation> batches) {
        return new CompactedBatches(this, batches);
    }

    /**
     * Adds to {@code live} where the latest records of the live entries of {@code keyGroups} are
     * among the pass's batches, key group by key group. A checkpoint that completes meanwhile may
     * index newer records: the copies of the records it outdates are merely dead, and {@link
     * #moved} leaves their entries where they are.
     */
    public void collectLive(KeyGroupRange keyGroups, CompactedBatches pass, RecordsToCopy live) {
        for (int kg = keyGroups.getStartKeyGroup(); kg <= keyGroups.getEndKeyGroup(); kg++) {
            of(kg).collectLive(kg, pass, live);
        }
    }

    /** Whether the entry is live, that is, its latest record is not a tombstone. */
    public boolean isLive(int keyGroup, int state, byte[] key, int offset, int keyLength) {
        return of(keyGroup).latestSegment(state, key, offset, keyLength) >= 0;
    }

    /** The segment of the entry's latest record, or null if the entry is not live. */
    public String latestSegment(int keyGroup, int state, byte[] key, int offset, int keyLength) {
        int id = of(keyGroup).latestSegment(state, key, offset, keyLength);
        return id < 0 ? null : segments.byId(id).segment();
    }

    /** Where the entry's latest record is, as "segment#batch@position", or null: for tests. */
    String latestRecord(int keyGroup, int state, byte[] key, int offset, int keyLength) {
        return of(keyGroup).latestRecord(state, key, offset, keyLength);
    }

    /**
     * Compaction copied every record in {@code copied} from the batches of {@code pass} into the
     * run at {@code run} ({@code tombstones}: tombstones too): the index follows for each entry
     * whose latest record is still the one copied. The moves are kept until a completed checkpoint
     * holds the run ({@link #runTaken}), or the run is refused or dropped ({@link #runDropped}).
     * Should this fail halfway, compaction stops ({@link #awaitUpdates}): the entries left behind
     * would point at batches the run replaced, and a pass over the run would take their records
     * for dead.
     */
    public void moved(
            List<RecordsToCopy> copied,
            CompactedBatches pass,
            BatchLocation run,
            boolean tombstones) {
        RecordAt to = placeOf(run);
        int id = to.segment;
        if (tombstones) {
            segments.byId(id).tombstoneIndexed();
        }
        RunMoves moves = new RunMoves(id, pass, copied);
        try {
            for (int list = 0; list < copied.size(); list++) {
                for (int i = 0; i < copied.get(list).size(); i++) {
                    moves.move(this, list, i, to);
                }
            }
        } catch (RuntimeException | Error e) {
            updateFailed(e);
            throw e;
        }
        synchronized (openRuns) {
            openRuns.put(id, moves);
        }
    }

    /** A completed checkpoint holds run {@code run}: the entries moved into it stay there. */
    public void runTaken(String run) {
        synchronized (openRuns) {
            openRuns.remove(segmentId(run));
        }
    }

    /**
     * The log will never hold run {@code run} (it was refused, or the checkpoint that took it up
     * was aborted or subsumed): on {@code executor}, in order with the batches indexed there, the
     * entries moved into it go back to where their records are, in the batches it would have
     * replaced.
     */
    public void runDropped(String run, Executor executor) {
        RunMoves moves;
        synchronized (openRuns) {
            moves = openRuns.remove(segmentId(run));
        }
        if (moves != null) {
            updateLater(
                    executor,
                    () -> moves.moveBack(this),
                    "Could not move the entries of dropped compaction run "
                            + run
                            + " back; compaction stops");
        }
    }

    /** Stops counting segments that no checkpoint of this backend refers to any more. */
    public void retain(Set<String> referencedSegments) {
        referenced.keySet().retainAll(referencedSegments);
    }

    public SegmentStats stats(String segment) {
        return referenced.get(segment);
    }

    /**
     * Counts a batch's bytes (records, header, footer, key groups of other owners), with its
     * records uncompressed ({@link BatchLocation#rawLength}), as live bytes are counted. Its segment
     * is among the counted ones ({@link #segments}, {@link #liveBytes}) from now on, until {@link
     * #retain} leaves it out: only a batch that the log refers to is added, never one still being
     * written, so that retaining what the log refers to cannot forget it.
     */
    public void batchAdded(String segment, long length) {
        SegmentStats stats = segments.byId(segments.idOf(segment));
        referenced.computeIfAbsent(segment, s -> stats).added(length);
    }

    /** Segments that the last completed checkpoint refers to. */
    public int segmentCount() {
        return referenced.size();
    }

    /** Bytes of the index's tables and key bytes, over all key groups. */
    public long heapBytes() {
        long bytes = 0;
        for (KeyGroupIndex index : perKeyGroup) {
            bytes += index.heapBytes();
        }
        return bytes;
    }

    /**
     * Whether an update failed since the last full batch was indexed: compaction stays stopped
     * ({@link #awaitUpdates}) until the full checkpoint it asked for is indexed.
     */
    public boolean missedUpdate() {
        synchronized (updates) {
            return failedUpdate != null;
        }
    }

    public Collection<SegmentStats> segments() {
        return new ArrayList<>(referenced.values());
    }

    public long liveBytes() {
        return referenced.values().stream().mapToLong(SegmentStats::liveBytes).sum();
    }

    public long totalBytes() {
        return referenced.values().stream().mapToLong(SegmentStats::totalBytes).sum();
    }

    public long liveEntries() {
        long n = 0;
        for (KeyGroupIndex index : perKeyGroup) {
            n += index.size();
        }
        return n;
    }
}
