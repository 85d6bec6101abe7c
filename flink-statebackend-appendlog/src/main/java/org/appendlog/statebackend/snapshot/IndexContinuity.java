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

import org.appendlog.statebackend.log.BatchLocation;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.appendlog.statebackend.log.BatchLocation.keysOf;

/**
 * What the index can follow: it learned the batches of the checkpoints completed so far, and
 * follows the log to another checkpoint's only if that log holds every change of the completed
 * one. It knows the changes each batch of the completed log carries ({@link CarriedChanges}),
 * and judges from them whether another log lacks only changes that its own batches carry again.
 *
 * <p>Not thread-safe: the {@link CheckpointLineage} calls it under its own monitor.
 */
final class IndexContinuity {

    /** For each batch of the completed log that a checkpoint appended: the changes it carries. */
    private final Map<String, CarriedChanges> carried = new HashMap<>();

    /** Checkpoint {@code checkpointId} completed, and {@code base} is now the completed log. */
    void completed(long checkpointId, WrittenCheckpoint completed, List<BatchLocation> base) {
        if (completed.appendedAt != null) {
            carried.put(completed.appendedAt.key(), CarriedChanges.of(completed, checkpointId));
        }
        carried.keySet().retainAll(keysOf(base));
    }

    /**
     * Whether the index follows the log from {@code base}, the completed log, to {@code
     * completed}'s once it learns that one's batch: its log holds no batch that the index never
     * learned but its own and {@code appliedRun}, the run of the pending compaction it applied,
     * and every batch of {@code base} that it lacks is in {@code replaced} (that compaction
     * replaced it) or carries only changes that its own batch carries again, which the index
     * learns there. Not so when its asynchronous phase listed an earlier log than a checkpoint
     * completed since had built on (a completion reached the task after the barrier), or the log
     * of a checkpoint that never completed: the log then lacks batches or a compaction run that
     * the index follows, or holds records the index does not know of, and compaction would take
     * records of the log for dead.
     */
    boolean canFollow(
            WrittenCheckpoint completed,
            List<BatchLocation> base,
            Set<String> replaced,
            @Nullable BatchLocation appliedRun) {
        if (completed.full) {
            return true;
        }
        Set<String> unknown = keysOf(completed.batches);
        unknown.removeAll(keysOf(base));
        if (completed.appendedAt != null) {
            unknown.remove(completed.appendedAt.key());
        }
        if (appliedRun != null) {
            unknown.remove(appliedRun.key());
        }
        return unknown.isEmpty()
                && isBaseHeldUpTo(completed, base, replaced, completed.builtOn);
    }

    /**
     * Whether checkpoint {@code checkpointId}'s log holds every change of {@code base}, the log of
     * checkpoint {@code lastCompleted}: the batches it lists, and its own (empty, if it appended
     * none), carry again what the batches of the completed log that it lacks carry, but for those
     * in {@code replaced}. The batches of the checkpoints still {@code written} count with the
     * completed ones. A completion that reached the task after the barrier leaves a checkpoint on
     * an earlier log, whose batches carry changes from before the completed one's.
     */
    boolean isCompletedLogHeldBy(
            long checkpointId,
            WrittenCheckpoint checkpoint,
            Map<Long, WrittenCheckpoint> written,
            long lastCompleted,
            List<BatchLocation> base,
            Set<String> replaced) {
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
        return isBaseHeldUpTo(
                checkpoint,
                base,
                replaced,
                CarriedChanges.earliestCoveredBarrier(lastCompleted, intervals));
    }

    /**
     * Whether every batch of {@code base} that {@code checkpoint}'s log lacks is in {@code
     * replaced}, or carries only changes after the barrier of checkpoint {@code since}.
     */
    private boolean isBaseHeldUpTo(
            WrittenCheckpoint checkpoint,
            List<BatchLocation> base,
            Set<String> replaced,
            long since) {
        Set<String> listed = keysOf(checkpoint.batches);
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
}
