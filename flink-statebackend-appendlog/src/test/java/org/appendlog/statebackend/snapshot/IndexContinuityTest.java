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

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Map;
import java.util.Set;

import static org.appendlog.statebackend.log.BatchLocation.keysOf;
import static org.appendlog.statebackend.snapshot.PendingCompactionTest.batch;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which logs the index can follow. Full checkpoint 1 appended {@code full}, checkpoint 2 built on
 * it appended {@code changes}, and both completed: the completed log is {@code full, changes}.
 * Batch {@code later} is appended by checkpoint 3. The checkpoints that reach such logs are in
 * {@code CompactionTest} and {@code IncrementalCheckpointTest}.
 */
class IndexContinuityTest {

    private final BatchLocation full = batch("seg-1", 1);
    private final BatchLocation changes = batch("seg-2", 2);
    private final BatchLocation later = batch("seg-3", 3);
    private final List<BatchLocation> base = List.of(full, changes);
    private final IndexContinuity continuity = new IndexContinuity();

    @BeforeEach
    void completeTheFirstTwo() {
        WrittenCheckpoint first = new WrittenCheckpoint(List.of(full), -1, true, null, null, full);
        assertThat(continuity.canFollow(first, List.of(), Set.of(), null)).isTrue();
        continuity.completed(1, first, List.of(full));
        WrittenCheckpoint second = incremental(base, 1, changes);
        assertThat(continuity.canFollow(second, List.of(full), Set.of(), null)).isTrue();
        continuity.completed(2, second, base);
    }

    @Test
    void itFollowsACheckpointThatBuildsOnTheCompletedLog() {
        assertThat(canFollow(incremental(List.of(full, changes, later), 2, later))).isTrue();
    }

    @Test
    void itFollowsALogThatLacksOnlyChangesItsOwnBatchCarriesAgain() {
        // Listed before checkpoint 2's completion reached the task: its batch carries (1, 3].
        assertThat(canFollow(incremental(List.of(full, later), 1, later))).isTrue();
    }

    @Test
    void itDoesNotFollowALogThatLostChanges() {
        // Its batch carries (2, 3] only: the changes up to 2 are in no batch it lists.
        assertThat(canFollow(incremental(List.of(full, later), 2, later))).isFalse();
        // The full batch carries every change up to 1, which no batch after it carries again.
        assertThat(canFollow(incremental(List.of(changes, later), 1, later))).isFalse();
    }

    @Test
    void itDoesNotFollowALogHoldingABatchItNeverLearned() {
        BatchLocation ofAnAbortedCheckpoint = batch("seg-aborted", 3);
        WrittenCheckpoint onItsLog =
                incremental(List.of(full, changes, ofAnAbortedCheckpoint, later), 2, later);
        assertThat(canFollow(onItsLog)).isFalse();
    }

    @Test
    void itFollowsTheRunOfTheCompactionTheCheckpointApplied() {
        BatchLocation run = batch("run-1", 2);
        WrittenCheckpoint compacted = incremental(List.of(run, later), 2, later);

        assertThat(continuity.canFollow(compacted, base, keysOf(base), run)).isTrue();
        assertThat(canFollow(compacted)).isFalse();
    }

    @Test
    void aLogOnAnEarlierOneHoldsTheCompletedLogIfItsBatchesCarryItsChanges() {
        WrittenCheckpoint onEarlierLog = incremental(List.of(full, later), 1, later);
        assertThat(isCompletedLogHeldBy(3, onEarlierLog, Map.of(3L, onEarlierLog))).isTrue();

        WrittenCheckpoint sinceTheCompletedOne = incremental(List.of(full, later), 2, later);
        assertThat(isCompletedLogHeldBy(3, sinceTheCompletedOne, Map.of(3L, sinceTheCompletedOne)))
                .isFalse();
    }

    @Test
    void theBatchesOfPendingCheckpointsCountWithTheCompletedOnes() {
        // Checkpoint 3, pending, listed the earlier log; checkpoint 4 lists its log, and its own
        // batch carries (2, 4]: checkpoint 3's batch carries the changes up to 2 again.
        WrittenCheckpoint third = incremental(List.of(full, later), 1, later);
        BatchLocation fourth = batch("seg-4", 4);
        WrittenCheckpoint onThirdsLog = incremental(List.of(full, later), 2, fourth);

        assertThat(isCompletedLogHeldBy(4, onThirdsLog, Map.of(3L, third, 4L, onThirdsLog)))
                .isTrue();
        assertThat(isCompletedLogHeldBy(4, onThirdsLog, Map.of(4L, onThirdsLog))).isFalse();
    }

    private boolean canFollow(WrittenCheckpoint checkpoint) {
        return continuity.canFollow(checkpoint, base, Set.of(), null);
    }

    private boolean isCompletedLogHeldBy(
            long checkpointId, WrittenCheckpoint checkpoint, Map<Long, WrittenCheckpoint> written) {
        return continuity.isCompletedLogHeldBy(
                checkpointId, checkpoint, written, 2, base, Set.of());
    }

    private static WrittenCheckpoint incremental(
            List<BatchLocation> batches, long builtOn, BatchLocation appendedAt) {
        return new WrittenCheckpoint(batches, builtOn, false, null, null, appendedAt);
    }
}
