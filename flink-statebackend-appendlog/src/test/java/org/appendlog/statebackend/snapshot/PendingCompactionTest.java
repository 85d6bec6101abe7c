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

import org.apache.flink.runtime.state.KeyGroupRange;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.Set;
import java.util.function.Predicate;

import static org.appendlog.statebackend.log.BatchLocation.keysOf;
import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Who takes up a compaction result and when it is settled. The checkpoints and the log these
 * decisions act on are in {@code CompactionTest} and {@code CompactionInterleavingTest}.
 */
class PendingCompactionTest {

    private static final Predicate<String> NOTHING_GIVEN = segment -> false;

    private final BatchLocation first = batch("seg-1", 1);
    private final BatchLocation second = batch("seg-2", 2);
    private final BatchLocation run = batch("run-1", 2);
    private final List<BatchLocation> base = List.of(first, second);
    private final CompactionResult result = new CompactionResult(keysOf(base), run);
    private final PendingCompaction pending = new PendingCompaction();

    @Test
    void theFirstCheckpointToApplyItTakesItUpAndListsTheRunAsItsOwn() {
        pending.accept(result);
        assertThat(pending.takenUp()).isFalse();

        assertThat(pending.takeUp(base, 5, NOTHING_GIVEN)).isSameAs(result);
        assertThat(pending.takenUpBy(5)).isTrue();
        assertThat(pending.runIsPlaceholderFor(result, 5)).isFalse();
        assertThat(pending.runIsPlaceholderFor(result, 6)).isTrue();
        // Its own asynchronous phase may ask again.
        assertThat(pending.takeUp(base, 5, NOTHING_GIVEN)).isSameAs(result);
    }

    @Test
    void aLaterCheckpointFollowsTheTakerOnlyOnceTheTakerWasGivenTheRun() {
        pending.accept(result);
        pending.takeUp(base, 5, NOTHING_GIVEN);

        assertThat(pending.takeUp(base, 6, NOTHING_GIVEN)).isNull();
        assertThat(pending.takeUp(base, 6, run.segment()::equals)).isSameAs(result);
        assertThat(pending.takenUpBy(5)).isTrue();
    }

    @Test
    void anEarlierCheckpointNeverAppliesWhatALaterOneTookUp() {
        pending.accept(result);
        pending.takeUp(base, 5, NOTHING_GIVEN);

        assertThat(pending.takeUp(base, 4, segment -> true)).isNull();
    }

    @Test
    void aLogThatLacksAReplacedBatchDoesNotTakeItUp() {
        pending.accept(result);

        assertThat(pending.takeUp(List.of(second), 5, NOTHING_GIVEN)).isNull();
        assertThat(pending.takenUp()).isFalse();
    }

    @Test
    void aCheckpointAppliesOnlyTheResultThatIsPending() {
        pending.accept(result);
        CompactionResult other = new CompactionResult(Set.of(first.key()), null);

        assertThat(pending.replacedBy(written(result))).isEqualTo(keysOf(base));
        assertThat(pending.appliedBy(written(other))).isFalse();
        assertThat(pending.replacedBy(written(other))).isEmpty();
        assertThat(pending.replacedBy(written(null))).isEmpty();
    }

    @Test
    void itIsSettledOnceAReplacedBatchIsGoneOrALaterCheckpointCompletedWithoutIt() {
        pending.accept(result);
        pending.takeUp(base, 5, NOTHING_GIVEN);

        assertThat(pending.settledBy(5, keysOf(base))).isFalse();
        assertThat(pending.settledBy(5, keysOf(List.of(run)))).isTrue();
        // The taker 5 can no longer complete: the task may discard it, run and all.
        assertThat(pending.settledBy(6, keysOf(base))).isTrue();
    }

    @Test
    void oneResultAtATime() {
        pending.accept(result);

        assertThatThrownBy(() -> pending.accept(result)).isInstanceOf(IllegalStateException.class);
        pending.clear();
        assertThat(pending.isPending()).isFalse();
        assertThat(pending.run()).isNull();
        assertThat(pending.settledBy(6, Set.of())).isFalse();
        pending.accept(result);
        assertThat(pending.run()).isSameAs(run);
    }

    private WrittenCheckpoint written(CompactionResult compaction) {
        return new WrittenCheckpoint(List.of(run), 1, false, compaction, null, null);
    }

    static BatchLocation batch(String segment, long checkpointId) {
        return new BatchLocation(segment, 0, 100, checkpointId, checkpointId, KeyGroupRange.of(0, 0));
    }
}
