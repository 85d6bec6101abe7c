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
import org.appendlog.statebackend.log.BatchLocation;

import javax.annotation.Nullable;

import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import static org.appendlog.statebackend.log.BatchLocation.keysOf;

/**
 * The compaction result that no completed checkpoint has taken up yet, and the checkpoint that
 * first referred to its run (the taker): like the cleaning state of Kafka's log cleaner, at most
 * one pass is in flight, and it is settled only once a completed checkpoint took it up or made it
 * moot. It decides; the {@link CheckpointLineage} acts on the log and the index.
 *
 * <p>Not thread-safe: the lineage calls it under its own monitor.
 */
final class PendingCompaction {

    @Nullable private CompactionResult result;
    /**
     * The first checkpoint that referred to the run, or -1: if the task discards that checkpoint
     * unregistered, the run goes with it.
     */
    private long takenUpBy = -1;

    boolean isPending() {
        return result != null;
    }

    /** The run of the pending result, or null if none is pending or it kept no record. */
    @Nullable
    BatchLocation run() {
        return result == null ? null : result.run();
    }

    /** Whether a checkpoint referred to the pending result's run. */
    boolean takenUp() {
        return takenUpBy >= 0;
    }

    /** Whether checkpoint {@code checkpointId} was the first to refer to the pending run. */
    boolean takenUpBy(long checkpointId) {
        return result != null && takenUpBy == checkpointId;
    }

    /** Makes {@code offered} the pending result, none being pending; nobody has taken it up. */
    void accept(CompactionResult offered) {
        if (result != null) {
            throw new IllegalStateException("A compaction result is pending already");
        }
        result = offered;
        takenUpBy = -1;
    }

    /** Whether {@code checkpoint}'s batches apply the pending result. */
    boolean appliedBy(WrittenCheckpoint checkpoint) {
        return result != null && checkpoint.compaction == result;
    }

    /** The batches that the pending result replaced, if {@code checkpoint} applied it. */
    Set<String> replacedBy(WrittenCheckpoint checkpoint) {
        return appliedBy(checkpoint) ? result.replacedBatches() : Set.of();
    }

    /**
     * The pending result if checkpoint {@code checkpointId} applies it to {@code batches}, else
     * null. The first checkpoint to apply it takes it up and lists the run as its own; later
     * checkpoints list it as a placeholder (see {@link #mayApplyTakenUpResult}). Without it, they
     * would list the segments it replaced as placeholders, and be refused once the taker completed.
     * {@code handedOut} tells whether a checkpoint was given a segment (its handle made).
     */
    @Nullable
    CompactionResult takeUp(
            List<BatchLocation> batches, long checkpointId, Predicate<String> handedOut) {
        if (result == null || !keysOf(batches).containsAll(result.replacedBatches())) {
            return null;
        }
        if (takenUpBy < 0) {
            takenUpBy = checkpointId;
        } else if (takenUpBy != checkpointId
                && !mayApplyTakenUpResult(checkpointId, handedOut)) {
            return null;
        }
        return result;
    }

    /**
     * Whether a checkpoint may apply the result that another one took up: only a later one, once
     * the taker was given the run. The JobManager resolves the later checkpoint's placeholder to
     * the handle the taker's acknowledgement registered, or refuses it should the taker be
     * discarded unregistered, deleting the run: so only the taker ever deletes the run, and no
     * checkpoint is left referring to a deleted one. An earlier checkpoint (its asynchronous
     * phase came late) can complete only if the taker does not, and its acknowledgement may come
     * before the taker's.
     */
    private boolean mayApplyTakenUpResult(long checkpointId, Predicate<String> handedOut) {
        BatchLocation run = result.run();
        return takenUpBy < checkpointId && (run == null || handedOut.test(run.segment()));
    }

    /**
     * Whether checkpoint {@code checkpointId}, applying {@code compaction}, lists its run as a
     * placeholder: it does unless it is the taker, which lists the run as its own.
     */
    boolean runIsPlaceholderFor(CompactionResult compaction, long checkpointId) {
        return compaction.run() != null && takenUpBy != checkpointId;
    }

    /**
     * Whether the pending result is settled now that checkpoint {@code completedId} completed on
     * the batches {@code current}: it took the result up or made it moot (a replaced batch is
     * gone), or a later checkpoint completed without it after an earlier one took it up, which
     * can then no longer complete, and the task may discard it, run and all.
     */
    boolean settledBy(long completedId, Set<String> current) {
        if (result == null) {
            return false;
        }
        boolean takenUpByAnAbandonedCheckpoint = takenUpBy >= 0 && takenUpBy < completedId;
        return !current.containsAll(result.replacedBatches()) || takenUpByAnAbandonedCheckpoint;
    }

    /** Forgets the pending result; the caller decides what becomes of its run. */
    void clear() {
        result = null;
        takenUpBy = -1;
    }
}
