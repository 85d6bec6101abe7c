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

import org.apache.flink.runtime.state.KeyGroupRange;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.util.List;
import java.util.Set;

import static org.appendlog.statebackend.log.BatchLocation.keysOf;
import static org.appendlog.statebackend.snapshot.PendingCompactionTest.batch;
import static org.appendlog.statebackend.snapshot.SnapshotHandleAssemblerTest.localLog;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * The lineage of checkpoints as the barriers, the asynchronous phases and the notifications
 * drive it. Each checkpoint here is remembered without a batch of its own, so the index learns
 * nothing; the checkpoints that write and restore such logs are in {@code
 * IncrementalCheckpointTest}, {@code CompactionTest} and {@code CompactionInterleavingTest}.
 */
class CheckpointLineageTest {

    private static final KeyGroupRange KEY_GROUPS = KeyGroupRange.of(0, 0);

    @TempDir File dir;
    private CheckpointLineage lineage;
    private final BatchLocation full = batch("seg-1", 1);

    @BeforeEach
    void open() {
        lineage = new CheckpointLineage(localLog(dir), new LogIndex(KEY_GROUPS), Runnable::run);
        lineage.startFrom(List.of(), false);
    }

    @Test
    void capturesStayUntilACheckpointHoldingThemCompletes() {
        Capture first = capture(1, 3);
        lineage.barrierTaken(first, false);
        assertThat(lineage.listIncremental(1).captures).containsExactly(first);
        lineage.remember(1, List.of(), -1, false, null, null, null);
        lineage.notifyCheckpointAborted(1);

        Capture second = capture(2, 4);
        lineage.barrierTaken(second, false);
        assertThat(lineage.backlog().changed).isEqualTo(7);
        CheckpointListing listing = lineage.listIncremental(2);
        assertThat(listing.captures).containsExactly(first, second);
        lineage.remember(2, listing.batches, listing.builtOn, false, null, null, null);
        lineage.notifyCheckpointComplete(2);

        assertThat(lineage.backlog().changed).isZero();
        assertThat(lineage.listIncremental(3).captures).isEmpty();
    }

    @Test
    void checkpointsAreFullUntilAFullOneCompletes() {
        lineage.barrierTaken(capture(1, 0), true);
        CheckpointLineage.Backlog backlog = lineage.backlog();
        assertThat(backlog.needsFull).isTrue();
        assertThat(backlog.pendingFull).isEqualTo(1);
        assertThat(lineage.mayCompact()).isFalse();
        // Not written yet: the checkpoint after it cannot build on its log.
        lineage.barrierTaken(capture(2, 1), false);
        assertThat(lineage.listAfterFull(2, 1).full).isTrue();

        lineage.remember(1, List.of(full), -1, true, null, null, null);
        lineage.notifyCheckpointComplete(1);

        assertThat(lineage.backlog().needsFull).isFalse();
        assertThat(lineage.mayCompact()).isTrue();
        assertThat(lineage.baseBatches()).containsExactly(full);
        assertThat(lineage.listAfterFull(3, 1).full).isFalse();
    }

    @Test
    void onlyAFullCheckpointTakenAfterTheRequestEndsIt() {
        lineage.barrierTaken(capture(1, 0), true);
        lineage.requireFullCheckpoint();
        assertThat(lineage.backlog().pendingFull).isEqualTo(-1);
        lineage.remember(1, List.of(full), -1, true, null, null, null);
        lineage.notifyCheckpointComplete(1);
        assertThat(lineage.backlog().needsFull).isTrue();

        BatchLocation later = batch("seg-2", 2);
        lineage.barrierTaken(capture(2, 0), true);
        lineage.remember(2, List.of(later), -1, true, null, null, null);
        lineage.notifyCheckpointComplete(2);
        assertThat(lineage.backlog().needsFull).isFalse();
    }

    @Test
    void aCompactionIsTakenUpByTheNextCheckpointAndSettledWhenItCompletes() {
        completeFull();
        BatchLocation run = batch("run-1", 1);
        CompactionResult compaction = new CompactionResult(keysOf(List.of(full)), run);
        assertThat(lineage.offerCompaction(compaction)).isTrue();
        assertThat(lineage.mayCompact()).isFalse();
        assertThat(lineage.offerCompaction(new CompactionResult(Set.of(), null))).isFalse();

        lineage.barrierTaken(capture(2, 1), false);
        CheckpointListing listing = lineage.listIncremental(2);
        assertThat(listing.batches).containsExactly(run);
        assertThat(listing.compaction).isSameAs(compaction);
        // The run is its own; the segment of the completed log is registered already.
        assertThat(listing.placeholders).containsExactly(full.segment());
        lineage.remember(2, listing.batches, listing.builtOn, false, compaction, null, null);
        lineage.notifyCheckpointComplete(2);

        assertThat(lineage.baseBatches()).containsExactly(run);
        assertThat(lineage.mayCompact()).isTrue();
    }

    @Test
    void noCompactionIsOfferedWhileAFullCheckpointIsNeeded() {
        completeFull();
        lineage.requireFullCheckpoint();

        assertThat(lineage.offerCompaction(new CompactionResult(keysOf(List.of(full)), null)))
                .isFalse();
        lineage.barrierTaken(capture(2, 1), false);
        assertThat(lineage.listIncremental(2).compaction).isNull();
    }

    private void completeFull() {
        lineage.barrierTaken(capture(1, 0), true);
        lineage.remember(1, List.of(full), -1, true, null, null, null);
        lineage.notifyCheckpointComplete(1);
    }

    private static Capture capture(long checkpointId, long changed) {
        Capture capture =
                new Capture(checkpointId, new BatchBuilder(checkpointId, KEY_GROUPS, List.of("s")));
        capture.changed = changed;
        return capture;
    }
}
