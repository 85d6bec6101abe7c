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

import org.appendlog.statebackend.compaction.CompactionResult;
import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.SegmentedLog;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.Executor;

import static org.appendlog.statebackend.log.BatchLocation.keysOf;
import static org.appendlog.statebackend.log.BatchLocation.segmentsOf;

/**
 * Which log each checkpoint of one backend lists. It knows the log of the last completed
 * checkpoint (the base), the checkpoints written since, the captures no completed checkpoint holds
 * yet and whether the next checkpoint must be full; the compaction result that waits to be taken
 * up is the {@link PendingCompaction}, and what the index can follow, the {@link
 * IndexContinuity}.
 *
 * <p>A checkpoint lists the base plus one new batch carrying every capture taken since (or, with
 * concurrent checkpoints, the log of a pending checkpoint that holds the base's changes: {@link
 * #pendingToBuildOn}). Captures are dropped only when a checkpoint containing them completes,
 * so an aborted, failed or out-of-order checkpoint never loses a change. The index learns a
 * checkpoint's batch only once it completes, and only if it can follow the log there ({@link
 * IndexContinuity#canFollow}); else the next checkpoint is full.
 *
 * <p>Thread-safe: the task thread (barriers), the asynchronous phases, the compactor and the
 * notifications all come here, each under this object's monitor.
 */
public final class CheckpointLineage {

    private static final Logger LOG = LoggerFactory.getLogger(CheckpointLineage.class);

    private final SegmentedLog log;
    private final LogIndex index;
    private final Executor background;

    /** Captures that no completed checkpoint holds yet, oldest first. */
    private final List<Capture> pending = new ArrayList<>();
    /** Checkpoints written but not yet known to be complete. */
    private final TreeMap<Long, WrittenCheckpoint> written = new TreeMap<>();
    private final IndexContinuity continuity = new IndexContinuity();
    /** The last checkpoint known complete, and those aborted since: none of them is remembered. */
    private long lastCompleted = -1;
    private final Set<Long> aborted = new HashSet<>();
    private List<BatchLocation> base = new ArrayList<>();
    private boolean needsFull;
    /**
     * The last checkpoint that its barrier made full: until it or a later one completes, the
     * index may come to follow a full batch that a checkpoint building on an earlier one would
     * not contain.
     */
    private long lastFull = -1;
    private final PendingCompaction pendingCompaction = new PendingCompaction();
    /**
     * A checkpoint written on the log of the last full one, still pending, was aborted: the
     * JobManager may have refused it, that full one having been discarded unregistered, so no
     * later one builds on it.
     */
    private boolean builtOnPendingFullAborted;

    public CheckpointLineage(SegmentedLog log, LogIndex index, Executor background) {
        this.log = log;
        this.index = index;
        this.background = background;
    }

    /** Sets what the first checkpoint after a restore builds on. */
    public synchronized void startFrom(List<BatchLocation> restoredBatches, boolean needsFull) {
        this.base = new ArrayList<>(restoredBatches);
        this.needsFull = needsFull;
    }

    /** What a barrier weighs before it judges whether its checkpoint is full. */
    static final class Backlog {
        /** The next checkpoint must be full, whatever it captured. */
        final boolean needsFull;
        /**
         * The full checkpoint whose completion is all that makes the next one full, or -1: the
         * next one may be written on its log instead ({@link #listAfterFull}).
         */
        final long pendingFull;
        /** Entries the pending captures changed, as their barriers judged them. */
        final long changed;
        /** Whether a pending capture lost changes before they reached it. */
        final boolean lost;

        private Backlog(boolean needsFull, long pendingFull, long changed, boolean lost) {
            this.needsFull = needsFull;
            this.pendingFull = pendingFull;
            this.changed = changed;
            this.lost = lost;
        }
    }

    synchronized Backlog backlog() {
        boolean fullBarrierSinceNeeded = lastFull >= 0 && lastFull != Long.MAX_VALUE;
        boolean mayBuildOnIt = !abandoned(lastFull) && !builtOnPendingFullAborted;
        return new Backlog(
                needsFull,
                needsFull && fullBarrierSinceNeeded && mayBuildOnIt ? lastFull : -1,
                pending.stream().mapToLong(c -> c.changed).sum(),
                pending.stream().anyMatch(Capture::lostChanges));
    }

    /**
     * A barrier took {@code capture}. Until a full checkpoint or a later one completes, every
     * checkpoint is full: once a full checkpoint completes, the index follows its batch alone,
     * which an incremental checkpoint building on an earlier chain would not contain. So a full
     * checkpoint's changes are never kept: should it fail, the next one is full again.
     */
    synchronized void barrierTaken(Capture capture, boolean full) {
        if (full) {
            needsFull = true;
            lastFull = capture.checkpointId;
            builtOnPendingFullAborted = false;
        } else {
            pending.add(capture);
        }
    }

    /** What incremental checkpoint {@code checkpointId} lists; it claims the captures to write. */
    synchronized CheckpointListing listIncremental(long checkpointId) {
        List<BatchLocation> batches;
        Set<String> confirmed;
        Set<String> placeholders;
        CompactionResult compaction;
        WrittenCheckpoint earlier = pendingToBuildOn(checkpointId);
        if (earlier != null) {
            // Its segments are registered by the completed checkpoint or by its own
            // acknowledgement; only those both logs hold stay registered whichever completes.
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
                    && pendingCompaction.runIsPlaceholderFor(compaction, checkpointId)) {
                placeholders.add(compaction.run().segment());
            }
        }
        // Either way its batch carries every change since that one's barrier.
        return new CheckpointListing(
                batches,
                confirmed,
                placeholders,
                compaction,
                lastCompleted,
                claim(Long.MIN_VALUE, checkpointId),
                false);
    }

    /** What a full checkpoint lists: no batch but its own. */
    synchronized CheckpointListing listFull() {
        Set<String> confirmed = segmentsOf(base);
        return new CheckpointListing(new ArrayList<>(), confirmed, confirmed, null, -1, List.of(), true);
    }

    /**
     * What checkpoint {@code checkpointId} lists, whose barrier found full checkpoint {@code
     * full} pending (slower than the interval, with concurrent checkpoints): that one's log and a
     * batch carrying the captures since its barrier, if it was written and given its segments, so
     * the JobManager resolves them to what its acknowledgement registered. Else, or if a full
     * checkpoint is needed for another reason since, a full listing. Should the full one have
     * completed meanwhile, an incremental listing. Captures before its barrier it holds already,
     * and are not written again: its barrier kept no capture, so they would override its values.
     * Should this checkpoint complete before the full one, the index never learned the full batch
     * and the next checkpoint is full ({@link IndexContinuity#canFollow}).
     */
    synchronized CheckpointListing listAfterFull(long checkpointId, long full) {
        if (!needsFull) {
            return listIncremental(checkpointId);
        }
        WrittenCheckpoint onto = written.get(full);
        Set<String> segments = onto == null ? Set.of() : segmentsOf(onto.batches);
        boolean handedOut = onto != null && segments.stream().allMatch(log::isHandedOut);
        if (lastFull != full || !handedOut || builtOnPendingFullAborted) {
            LOG.debug(
                    "Checkpoint {} appends all live entries: full checkpoint {}, pending at its"
                            + " barrier, is not written yet or can no longer be built on",
                    checkpointId,
                    full);
            return listFull();
        }
        LOG.debug(
                "Checkpoint {} appends its changes on the log of full checkpoint {}, still pending",
                checkpointId,
                full);
        // As on a pending incremental log: only the segments both logs hold stay registered
        // whichever completes.
        Set<String> confirmed = segmentsOf(base);
        confirmed.retainAll(segments);
        return new CheckpointListing(
                new ArrayList<>(onto.batches),
                confirmed,
                segments,
                null,
                full,
                claim(full, checkpointId),
                false);
    }

    /** Claims the pending captures taken after barrier {@code after} up to {@code upTo}'s. */
    private List<Capture> claim(long after, long upTo) {
        List<Capture> captures = new ArrayList<>();
        for (Capture c : pending) {
            if (c.checkpointId > after && c.checkpointId <= upTo) {
                c.claimed = true;
                captures.add(c);
            }
        }
        return captures;
    }

    /**
     * Keeps the checkpoint's batches, and the batch it appended for the index to learn, until it
     * completes or is aborted; not if that happened before its asynchronous phase ended (it timed
     * out), which would keep the batch until a later checkpoint completes.
     */
    synchronized void remember(
            long checkpointId,
            List<BatchLocation> batches,
            long builtOn,
            boolean full,
            @Nullable CompactionResult compaction,
            @Nullable BatchBuilder batch,
            @Nullable BatchLocation location) {
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

    /** Whether the checkpoint can no longer complete: aborted, or a later one completed. */
    private boolean abandoned(long checkpointId) {
        return checkpointId <= lastCompleted || aborted.contains(checkpointId);
    }

    /**
     * The checkpoint whose log checkpoint {@code checkpointId} lists instead of the last completed
     * one's, or null. That is the latest checkpoint written before it, if its log lacks a segment
     * of the completed log other than through the pending compaction (it listed an earlier log,
     * its asynchronous phase coming before that completion reached the task, or the log of one
     * that did), yet holds every change of the completed log ({@link
     * IndexContinuity#isCompletedLogHeldBy}). Should it complete first, the JobManager drops the
     * segments it lacks, and would refuse a checkpoint listing them. Its segments that the completed log lacks are listed as
     * placeholders only once their checkpoint was given them: the JobManager then resolves them
     * to what that checkpoint's acknowledgement registered, or refuses this one should that
     * checkpoint be discarded unregistered. Should this one complete first, the index never
     * learned those, and the next checkpoint is full ({@link IndexContinuity#canFollow}).
     */
    @Nullable
    private WrittenCheckpoint pendingToBuildOn(long checkpointId) {
        Map.Entry<Long, WrittenCheckpoint> latest = written.lowerEntry(checkpointId);
        if (latest == null || latest.getValue().full) {
            return null;
        }
        WrittenCheckpoint earlier = latest.getValue();
        Set<String> listed = segmentsOf(earlier.batches);
        Set<String> replaced = pendingCompaction.replacedBy(earlier);
        boolean lacksACompletedSegment =
                base.stream()
                        .anyMatch(
                                b -> !listed.contains(b.segment()) && !replaced.contains(b.key()));
        Set<String> completed = segmentsOf(base);
        for (String segment : listed) {
            if (!completed.contains(segment) && !log.isHandedOut(segment)) {
                return null;
            }
        }
        return lacksACompletedSegment
                        && continuity.isCompletedLogHeldBy(
                                latest.getKey(), earlier, written, lastCompleted, base, replaced)
                ? earlier
                : null;
    }

    /**
     * The pending compaction if checkpoint {@code checkpointId} applies it to {@code batches}, else
     * null ({@link PendingCompaction#takeUp}).
     */
    @Nullable
    private CompactionResult compactionFor(List<BatchLocation> batches, long checkpointId) {
        // A late asynchronous phase would take it up for nothing.
        return abandoned(checkpointId)
                ? null
                : pendingCompaction.takeUp(batches, checkpointId, log::isHandedOut);
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

    /**
     * Offers a finished compaction; the next checkpoints use it. Refused, and its run dropped, if
     * the checkpoint the compactor read no longer underlies the log (a full checkpoint, a
     * concurrent pass), or while a full checkpoint is pending: the index then follows the full
     * batch, so the pass may have taken records of the log it read for dead. No other pass runs
     * until a completed checkpoint took the result up or it is dropped.
     */
    public synchronized boolean offerCompaction(CompactionResult result) {
        if (pendingCompaction.isPending()
                || needsFull
                || !keysOf(base).containsAll(result.replacedBatches())) {
            drop(result.run(), false);
            return false;
        }
        pendingCompaction.accept(result);
        if (result.run() != null) {
            // Counted from now on, when checkpoints that complete keep it (pruneIndex).
            index.batchAdded(result.run().segment(), result.run().rawLength());
        }
        return true;
    }

    /**
     * The next checkpoint appends every live entry, and only it or a later one ends that: the log
     * holds records that the current serializers cannot read (a state was registered again with
     * a serializer that needed migration), or changes were lost before reaching it.
     */
    public synchronized void requireFullCheckpoint() {
        needsFull = true;
        // The next barrier sets it to its own id; no checkpoint taken before may end this.
        lastFull = Long.MAX_VALUE;
    }

    /** Whether a compaction pass could be offered now: none pending, no full checkpoint pending. */
    public synchronized boolean mayCompact() {
        return !pendingCompaction.isPending() && !needsFull;
    }

    public synchronized void notifyCheckpointComplete(long checkpointId) {
        WrittenCheckpoint completed = written.get(checkpointId);
        if (completed == null) {
            return;
        }
        if (!continuity.canFollow(
                completed,
                base,
                pendingCompaction.replacedBy(completed),
                pendingCompaction.appliedBy(completed) ? pendingCompaction.run() : null)) {
            LOG.info(
                    "Checkpoint {} completed on a log that lacks changes the log of checkpoint"
                            + " {} held, or holds batches of a checkpoint that never completed;"
                            + " the next checkpoint is full, and compaction waits for it",
                    checkpointId,
                    lastCompleted);
            requireFullCheckpoint();
            if (pendingCompaction.isPending()) {
                // Its pass judged records by the index of the log left behind.
                dropCompaction(keysOf(completed.batches));
            }
        }
        base = completed.batches;
        continuity.completed(checkpointId, completed, base);
        if (completed.appendedAt != null) {
            // With base: the index counts the segment from now on, and no compaction pass judges
            // the completed log before the index knows its batch.
            if (completed.full) {
                index.indexFullBatchLater(
                        log.handle(completed.appendedAt.segment()),
                        completed.appendedAt,
                        background,
                        this::requireFullCheckpoint);
            } else {
                index.indexBatchLater(completed.appended, completed.appendedAt, background);
            }
        }
        if (pendingCompaction.settledBy(checkpointId, keysOf(base))) {
            dropCompaction(keysOf(base));
        }
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

    /**
     * Forgets the pending compaction. Its run stays if {@code current}, the completed log, holds
     * it; else it is dropped. Should a checkpoint that listed it complete all the same (the
     * completed log is then not one it built on), {@link IndexContinuity#canFollow} judges the log it
     * leaves behind.
     */
    private void dropCompaction(Set<String> current) {
        BatchLocation run = pendingCompaction.run();
        if (run != null && current.contains(run.key())) {
            index.runTaken(run.segment());
        } else {
            drop(run, pendingCompaction.takenUp());
        }
        pendingCompaction.clear();
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
        if (pendingCompaction.run() != null) {
            referenced.add(pendingCompaction.run().segment());
        }
        String active = log.activeSegment();
        if (active != null) {
            referenced.add(active);
        }
        index.retain(referenced);
    }

    public synchronized void notifyCheckpointAborted(long checkpointId) {
        WrittenCheckpoint abortedOne = written.remove(checkpointId);
        if (abortedOne != null && !abortedOne.full && abortedOne.builtOn == lastFull && needsFull) {
            builtOnPendingFullAborted = true;
        }
        if (checkpointId > lastCompleted) {
            aborted.add(checkpointId);
        }
        // The aborted checkpoint may be discarded unregistered, taking the run along; a later
        // pass compacts again.
        if (pendingCompaction.takenUpBy(checkpointId)) {
            dropCompaction(keysOf(base));
        }
    }

    /** The batches that the next incremental checkpoint builds on. */
    public synchronized List<BatchLocation> baseBatches() {
        return new ArrayList<>(base);
    }
}
