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

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendFixture;
import org.appendlog.statebackend.BackendHarness;
import org.appendlog.statebackend.tracking.ChangeTracker;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.concurrent.RunnableFuture;
import java.util.function.IntFunction;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * State that turns over between two checkpoints (windows: new entries written, the old ones
 * removed) changes more entries than it holds: the checkpoint then appends the live entries, and
 * a restore reads nothing of the log before them.
 */
class TurnoverCheckpointTest {

    private static final int FIRST_KEYS = 10_000;
    private static final int NEW_KEYS = 5_000;
    private static final int WINDOW = 1_000;

    @RegisterExtension final BackendFixture fixture = new BackendFixture();

    @Test
    void aCheckpointWhoseChangesOutnumberTheLiveEntriesAppendsTheLiveEntries() throws Exception {
        TurnedOver run = checkpointTurnover(1.0);
        assertThat(run.fullBatches).isEqualTo(1);
        // 5 000 records instead of 10 000 tombstones and 5 000 records.
        assertThat(run.second).isLessThan(run.first * 6 / 10);
        assertThat(run.restoredBytes)
                .as("bytes a restore of the full checkpoint reads")
                .isLessThan(run.second);
    }

    @Test
    void aLargerRatioKeepsTheCheckpointIncremental() throws Exception {
        TurnedOver run = checkpointTurnover(4.0);
        // Three times as many changes as live entries, below the ratio of 4: the changes go.
        assertThat(run.fullBatches).isZero();
        assertThat(run.second).isGreaterThan(run.first);
        assertThat(run.restoredBytes).isGreaterThan(run.first);
    }

    /** An infinite ratio: never full, not even once no entry is live (infinity times none). */
    @Test
    void anInfiniteRatioKeepsEveryCheckpointIncremental() throws Exception {
        try (BackendHarness harness =
                BackendHarness.open(
                        backend(Double.POSITIVE_INFINITY), BackendHarness.newRegistry())) {
            harness.checkpoint(1);
            harness.put(0, 0);
            harness.remove(0);
            harness.checkpoint(2);
            assertThat(harness.fullBatches()).isZero();
        }
        assertThat(checkpointTurnover(Double.POSITIVE_INFINITY).fullBatches).isZero();
    }

    /**
     * The full checkpoint never completes (the JobManager aborts it): the next one, with a single
     * change, is full as well (the index follows the lost full batch, no longer the log the first
     * checkpoint wrote); once a full one completed, a checkpoint with few changes is incremental
     * again, on top of it.
     */
    @Test
    void afterAFullCheckpointThatNeverCompletedTheNextIsFullToo() throws Exception {
        AppendLogStateBackend stateBackend = backend(1.0);
        IncrementalRemoteKeyedStateHandle third;
        IncrementalRemoteKeyedStateHandle fourth;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            firstCheckpoint(harness);
            turnOver(harness);
            harness.checkpointThatNeverCompletes(2).discardState();
            harness.backend.notifyCheckpointAborted(2);
            assertThat(harness.fullBatches()).isEqualTo(1);
            harness.put(FIRST_KEYS, 3);
            third = harness.checkpoint(3);
            assertThat(harness.fullBatches()).isEqualTo(2);
            harness.put(FIRST_KEYS + 1, 4);
            fourth = harness.checkpoint(4);
            assertThat(harness.fullBatches()).isEqualTo(2);
            assertThat(fourth.getCheckpointedSize()).isLessThan(third.getCheckpointedSize() / 10);
        }
        assertRestores(stateBackend, third, key -> valueAfterLaterWrites(key, 3));
        assertRestores(stateBackend, fourth, key -> valueAfterLaterWrites(key, 4));
    }

    /**
     * A checkpoint whose barrier finds a full one pending (full checkpoints slower than the
     * interval, with concurrent checkpoints) appends only its changes, on the full one's log,
     * once that one was written: it restores after both complete, and so does the next one.
     */
    @Test
    void aCheckpointTakenWhileAFullOneIsPendingAppendsOnlyItsChangesOnThatOne() throws Exception {
        AppendLogStateBackend stateBackend = backend(1.0);
        IncrementalRemoteKeyedStateHandle third;
        IncrementalRemoteKeyedStateHandle fourth;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            InFlight inFlight = fullCheckpointAndTheNext(harness);
            IncrementalRemoteKeyedStateHandle full = BackendHarness.written(inFlight.full);
            third = BackendHarness.written(inFlight.next);
            assertThat(harness.fullBatches()).isEqualTo(1);
            assertThat(third.getCheckpointedSize()).isLessThan(full.getCheckpointedSize() / 10);
            harness.acknowledge(full, 2);
            harness.acknowledge(third, 3);
            harness.complete(2);
            harness.complete(3);
            harness.put(FIRST_KEYS + 1, 4);
            fourth = harness.checkpoint(4);
            assertThat(harness.fullBatches()).isEqualTo(1);
            assertThat(fourth.getCheckpointedSize()).isLessThan(full.getCheckpointedSize() / 10);
        }
        assertRestores(stateBackend, third, key -> valueAfterLaterWrites(key, 3));
        assertRestores(stateBackend, fourth, key -> valueAfterLaterWrites(key, 4));
    }

    /**
     * The checkpoint written on a pending full one completes first (the full one is subsumed):
     * the JobManager resolves the full one's segment to what its acknowledgement registered. The
     * index never learned the full batch, so the next checkpoint is full.
     */
    @Test
    void aCheckpointOnAPendingFullOneThatCompletesFirstRestoresAndTheNextIsFull()
            throws Exception {
        AppendLogStateBackend stateBackend = backend(1.0);
        IncrementalRemoteKeyedStateHandle third;
        IncrementalRemoteKeyedStateHandle fourth;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            InFlight inFlight = fullCheckpointAndTheNext(harness);
            harness.acknowledge(BackendHarness.written(inFlight.full), 2);
            third = BackendHarness.written(inFlight.next);
            assertThat(harness.fullBatches()).isEqualTo(1);
            harness.acknowledge(third, 3);
            harness.complete(3);
            harness.put(FIRST_KEYS + 1, 4);
            fourth = harness.checkpoint(4);
            assertThat(harness.fullBatches()).isEqualTo(2);
        }
        assertRestores(stateBackend, third, key -> valueAfterLaterWrites(key, 3));
        assertRestores(stateBackend, fourth, key -> valueAfterLaterWrites(key, 4));
    }

    /**
     * The pending full checkpoint is not written yet when the next one's asynchronous phase
     * runs: that one appends all live entries, and keeps its changes, which the checkpoint after
     * it carries on the full one's log should only the full one complete.
     */
    @Test
    void aCheckpointWrittenBeforeThePendingFullOneIsFullAndKeepsItsChanges() throws Exception {
        AppendLogStateBackend stateBackend = backend(1.0);
        IncrementalRemoteKeyedStateHandle fourth;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            InFlight inFlight = fullCheckpointAndTheNext(harness);
            inFlight.next.run();
            assertThat(harness.fullBatches()).isEqualTo(1);
            harness.confirm(BackendHarness.written(inFlight.full), 2);
            assertThat(harness.fullBatches()).isEqualTo(2);
            harness.backend.notifyCheckpointAborted(3);
            inFlight.next.get().discardState();
            harness.put(FIRST_KEYS + 1, 4);
            fourth = harness.checkpoint(4);
            assertThat(harness.fullBatches()).isEqualTo(2);
        }
        assertRestores(stateBackend, fourth, key -> valueAfterLaterWrites(key, 4));
    }

    /**
     * The pending full checkpoint was discarded unregistered, and the abort has not reached the
     * task yet: the JobManager refuses the checkpoint written on it. Once that one's abort
     * arrives, no checkpoint builds on the full one again.
     */
    @Test
    void aCheckpointOnAFullOneDiscardedUnregisteredIsRefusedAndTheNextIsFull() throws Exception {
        Configuration config = new Configuration();
        // Each checkpoint's batch fills a segment: the full one has one of its own, which goes
        // with it (in a segment the first checkpoint registered, it would stay).
        config.setString(AppendLogOptions.SEGMENT_SIZE.key(), "32kb");
        AppendLogStateBackend stateBackend = backend(1.0, config);
        IncrementalRemoteKeyedStateHandle fifth;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            firstCheckpoint(harness);
            turnOver(harness);
            harness.checkpointThatNeverCompletes(2).discardState();
            harness.put(FIRST_KEYS, 3);
            IncrementalRemoteKeyedStateHandle third = harness.checkpointThatNeverCompletes(3);
            assertThatThrownBy(() -> harness.acknowledge(third, 3))
                    .hasMessageContaining("Attempt to reference unknown state");
            harness.backend.notifyCheckpointAborted(3);
            harness.put(FIRST_KEYS + 1, 4);
            harness.checkpoint(4);
            assertThat(harness.fullBatches()).isEqualTo(2);
            fifth = harness.checkpoint(5);
            assertThat(harness.fullBatches()).isEqualTo(2);
        }
        assertRestores(stateBackend, fifth, key -> valueAfterLaterWrites(key, 4));
    }

    /**
     * Two full checkpoints in flight, written out of order: the later one is written and
     * completes first, then the earlier one's asynchronous phase appends its older snapshot. The
     * index, which compaction judges records by, must go on describing the completed checkpoint.
     */
    @Test
    void aFullBatchWrittenAfterALaterCheckpointCompletedLeavesTheIndexAlone() throws Exception {
        AppendLogStateBackend stateBackend = backend(1.0);
        IncrementalRemoteKeyedStateHandle fourth;
        int removed = 1_000;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            firstCheckpoint(harness);
            turnOver(harness);
            RunnableFuture<SnapshotResult<KeyedStateHandle>> late = harness.snapshot(2);
            for (int key = FIRST_KEYS; key < FIRST_KEYS + removed; key++) {
                harness.remove(key);
            }
            harness.checkpoint(3);
            late.run();
            late.get().discardState();
            harness.backend.notifyCheckpointAborted(2);
            harness.index().awaitUpdates();
            assertThat(harness.index().liveEntries()).isEqualTo(NEW_KEYS - removed);
            harness.put(FIRST_KEYS + NEW_KEYS - 1, 4);
            fourth = harness.checkpoint(4);
        }
        assertRestores(
                stateBackend,
                fourth,
                key ->
                        key < FIRST_KEYS + removed
                                ? null
                                : key == FIRST_KEYS + NEW_KEYS - 1 ? 4L : valueAfterTurnOver(key));
    }

    /**
     * A full batch carries no tombstones for the entries removed before it: the index, which
     * compaction judges records by, must forget them all the same, or it grows with every window.
     */
    @Test
    void theIndexHoldsOnlyTheLiveEntriesAfterFullCheckpoints() throws Exception {
        AppendLogStateBackend stateBackend = backend(1.0);
        try (BackendHarness harness =
                BackendHarness.open(stateBackend, BackendHarness.newRegistry())) {
            int window = 0;
            for (long checkpoint = 1; checkpoint <= 5; checkpoint++) {
                for (int key = window; key < window + 1_000; key++) {
                    harness.remove(key);
                }
                window += 1_000;
                for (int key = window; key < window + 1_000; key++) {
                    harness.put(key, key);
                }
                harness.checkpoint(checkpoint);
            }
            // Each window's removals and writes are twice its entries.
            assertThat(harness.fullBatches()).isEqualTo(5);
            harness.index().awaitUpdates();
            assertThat(harness.index().liveEntries()).isEqualTo(1_000);
            assertThat(harness.index().liveBytes())
                    .isLessThan(harness.index().totalBytes() / 4);
        }
    }

    /**
     * Windows that turn over at every checkpoint: after three such checkpoints in a row, writes
     * are no longer tracked (every checkpoint is full anyway) and each checkpoint still restores
     * exactly; once the windows stop turning over, a tracked interval finds out, and checkpoints
     * are incremental again.
     */
    @Test
    void aStateThatKeepsTurningOverIsNotTrackedUntilItSettles() throws Exception {
        AppendLogStateBackend stateBackend = backend(1.0);
        IncrementalRemoteKeyedStateHandle last;
        long id = 1;
        int window = 0;
        long windowWritten;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            writeWindow(harness, window, id);
            harness.checkpoint(id);
            for (int turnover = 1; turnover <= TurnoverPattern.TURNOVERS_IN_A_ROW; turnover++) {
                assertThat(harness.changeTracker().isPaused()).isFalse();
                moveWindow(harness, window, window + WINDOW, ++id);
                window += WINDOW;
                harness.checkpoint(id);
            }
            assertThat(harness.fullBatches())
                    .isEqualTo(TurnoverPattern.TURNOVERS_IN_A_ROW);
            // Untracked: the window's writes leave nothing to capture, and restore all the same.
            moveWindow(harness, window, window + WINDOW, ++id);
            window += WINDOW;
            assertThat(harness.changeTracker().size()).isZero();
            last = harness.checkpoint(id);
            assertRestores(stateBackend, last, windowOf(window, id, -1, 0));
            windowWritten = id;
            // Settled: one key of the window changes per interval.
            long firstIncremental = -1;
            for (int interval = 0;
                    interval <= TurnoverDetector.PAUSED_INTERVALS_PER_PROBE + 1;
                    interval++) {
                long fullBefore = harness.fullBatches();
                harness.put(window, ++id);
                last = harness.checkpoint(id);
                if (firstIncremental < 0 && harness.fullBatches() == fullBefore) {
                    firstIncremental = id;
                }
            }
            assertThat(firstIncremental).as("an incremental checkpoint after settling").isPositive();
            assertThat(harness.changeTracker().isPaused()).isFalse();
        }
        assertRestores(stateBackend, last, windowOf(window, windowWritten, window, id));
    }

    /**
     * Windows that fire every second interval (TopK's in the benchmark): after two such periods,
     * the intervals due to turn over go untracked, except one in {@link
     * TurnoverDetector#PAUSED_INTERVALS_PER_PROBE}, and the intervals between them are tracked and
     * incremental. The same checkpoints are full as while every interval was tracked, and each
     * restores exactly. Once the windows stop firing, a tracked interval due to turn over finds
     * out, and every checkpoint is incremental again.
     */
    @Test
    void aStateThatTurnsOverEverySecondIntervalIsNotTrackedInTheIntervalsThatDo()
            throws Exception {
        AppendLogStateBackend stateBackend = backend(1.0);
        int probes = 2;
        int learning = TurnoverPattern.ALTERNATIONS / 2;
        int periods = learning + probes * TurnoverDetector.PAUSED_INTERVALS_PER_PROBE;
        int window = 0;
        long id = 1;
        long fullBatches = 0;
        long windowWritten;
        IncrementalRemoteKeyedStateHandle last = null;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            ChangeTracker tracker = harness.changeTracker();
            writeWindow(harness, window, id);
            harness.checkpoint(id);
            int untracked = 0;
            for (int period = 0; period < periods; period++) {
                boolean dueUntracked =
                        period >= learning
                                && (period - learning) % TurnoverDetector.PAUSED_INTERVALS_PER_PROBE
                                        != TurnoverDetector.PAUSED_INTERVALS_PER_PROBE - 1;
                assertThat(tracker.isPaused())
                        .as("period %s turns over", period)
                        .isEqualTo(dueUntracked);
                // Two windows' keys take turns, within the keys a restore checks.
                moveWindow(harness, window, WINDOW - window, ++id);
                window = WINDOW - window;
                assertThat(tracker.size() == 0).isEqualTo(dueUntracked);
                untracked += dueUntracked ? 1 : 0;
                IncrementalRemoteKeyedStateHandle turnedOver = harness.checkpoint(id);
                assertThat(harness.fullBatches()).isEqualTo(++fullBatches);
                assertRestores(stateBackend, turnedOver, windowOf(window, id, -1, 0));

                assertThat(tracker.isPaused()).as("period %s settles", period).isFalse();
                writeWindow(harness, window, ++id);
                last = harness.checkpoint(id);
                assertThat(harness.fullBatches()).isEqualTo(fullBatches);
                assertRestores(stateBackend, last, windowOf(window, id, -1, 0));
            }
            assertThat(untracked)
                    .isEqualTo(probes * (TurnoverDetector.PAUSED_INTERVALS_PER_PROBE - 1));
            // The metric counts the interval that starts untracked now, too.
            assertThat(tracker.isPaused()).isTrue();
            assertThat(tracker.untrackedIntervals()).isEqualTo(untracked + 1);
            // Settled: one key of the window changes per interval.
            windowWritten = id;
            int trackedInARow = 0;
            for (int interval = 0;
                    interval
                            < 2 * TurnoverDetector.PAUSED_INTERVALS_PER_PROBE
                                    + TurnoverPattern.ALTERNATIONS;
                    interval++) {
                boolean untrackedInterval = tracker.isPaused();
                harness.put(window, ++id);
                last = harness.checkpoint(id);
                fullBatches += untrackedInterval ? 1 : 0;
                assertThat(harness.fullBatches()).isEqualTo(fullBatches);
                trackedInARow = untrackedInterval ? 0 : trackedInARow + 1;
            }
            assertThat(trackedInARow).isGreaterThan(TurnoverPattern.ALTERNATIONS);
            assertThat(tracker.isPaused()).isFalse();
        }
        assertRestores(stateBackend, last, windowOf(window, windowWritten, window, id));
    }

    /** Removes the window of keys {@code from} on and writes the window {@code to} as {@code value}. */
    private static void moveWindow(BackendHarness harness, int from, int to, long value)
            throws Exception {
        for (int key = from; key < from + WINDOW; key++) {
            harness.remove(key);
        }
        writeWindow(harness, to, value);
    }

    /** Writes the keys of the window from {@code first} on as {@code value}. */
    private static void writeWindow(BackendHarness harness, int first, long value)
            throws Exception {
        for (int key = first; key < first + WINDOW; key++) {
            harness.put(key, value);
        }
    }

    /** The window of keys {@code first} on holding {@code value}, but {@code key} {@code keyValue}. */
    private static IntFunction<Long> windowOf(int first, long value, int key, long keyValue) {
        return k -> k < first || k >= first + WINDOW ? null : k == key ? keyValue : value;
    }

    /** Every entry removed: the checkpoint appends an empty batch, and restores to nothing. */
    @Test
    void aCheckpointAfterEveryEntryWasRemovedRestoresToNothing() throws Exception {
        AppendLogStateBackend stateBackend = backend(1.0);
        IncrementalRemoteKeyedStateHandle second;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            firstCheckpoint(harness);
            for (int key = 0; key < FIRST_KEYS; key++) {
                harness.remove(key);
            }
            second = harness.checkpoint(2);
            assertThat(harness.fullBatches()).isEqualTo(1);
        }
        long restoredBytes = assertRestores(stateBackend, second, key -> null);
        assertThat(restoredBytes).isLessThan(FIRST_KEYS);
    }

    private AppendLogStateBackend backend(double fullCheckpointRatio) {
        return backend(fullCheckpointRatio, new Configuration());
    }

    private AppendLogStateBackend backend(double fullCheckpointRatio, Configuration config) {
        // As a user writes it: Configuration.set would write infinity as ".inf", which it cannot read.
        config.setString(
                AppendLogOptions.FULL_CHECKPOINT_RATIO.key(), Double.toString(fullCheckpointRatio));
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        return fixture.backend(config);
    }

    private static IncrementalRemoteKeyedStateHandle firstCheckpoint(BackendHarness harness)
            throws Exception {
        for (int key = 0; key < FIRST_KEYS; key++) {
            harness.put(key, key);
        }
        IncrementalRemoteKeyedStateHandle first = harness.checkpoint(1);
        // As many changes as live entries: appended as changes.
        assertThat(harness.fullBatches()).isZero();
        return first;
    }

    /** The first keys removed, as many new ones as half of them written. */
    private static void turnOver(BackendHarness harness) throws Exception {
        for (int key = 0; key < FIRST_KEYS; key++) {
            harness.remove(key);
        }
        for (int key = FIRST_KEYS; key < FIRST_KEYS + NEW_KEYS; key++) {
            harness.put(key, -key);
        }
    }

    private Long valueAfterTurnOver(int key) {
        return key < FIRST_KEYS ? null : (long) -key;
    }

    /**
     * The value after the turnover and, up to checkpoint {@code upTo}, key FIRST_KEYS written as 3
     * at checkpoint 3 and key FIRST_KEYS + 1 as 4 at checkpoint 4.
     */
    private Long valueAfterLaterWrites(int key, long upTo) {
        if (key == FIRST_KEYS && upTo >= 3) {
            return 3L;
        }
        if (key == FIRST_KEYS + 1 && upTo >= 4) {
            return 4L;
        }
        return valueAfterTurnOver(key);
    }

    /**
     * The asynchronous phases of full checkpoint 2 (after the first checkpoint and the turnover)
     * and of checkpoint 3, whose barrier found it pending, with key FIRST_KEYS written as 3.
     */
    private static InFlight fullCheckpointAndTheNext(BackendHarness harness) throws Exception {
        firstCheckpoint(harness);
        turnOver(harness);
        RunnableFuture<SnapshotResult<KeyedStateHandle>> full = harness.snapshot(2);
        harness.put(FIRST_KEYS, 3);
        return new InFlight(full, harness.snapshot(3));
    }

    private static final class InFlight {
        final RunnableFuture<SnapshotResult<KeyedStateHandle>> full;
        final RunnableFuture<SnapshotResult<KeyedStateHandle>> next;

        InFlight(
                RunnableFuture<SnapshotResult<KeyedStateHandle>> full,
                RunnableFuture<SnapshotResult<KeyedStateHandle>> next) {
            this.full = full;
            this.next = next;
        }
    }

    /** Checkpoint sizes, full batches and the bytes a restore of the second checkpoint read. */
    private static final class TurnedOver {
        long first;
        long second;
        long fullBatches;
        long restoredBytes;
    }

    /** Checkpoints the first keys, turns them over, checkpoints again and restores that. */
    private TurnedOver checkpointTurnover(double fullCheckpointRatio) throws Exception {
        AppendLogStateBackend stateBackend = backend(fullCheckpointRatio);
        TurnedOver run = new TurnedOver();
        IncrementalRemoteKeyedStateHandle second;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            run.first = firstCheckpoint(harness).getCheckpointedSize();
            turnOver(harness);
            second = harness.checkpoint(2);
            run.second = second.getCheckpointedSize();
            run.fullBatches = harness.fullBatches();
        }
        run.restoredBytes =
                assertRestores(stateBackend, second, this::valueAfterTurnOver);
        return run;
    }

    private long assertRestores(
            AppendLogStateBackend stateBackend,
            IncrementalRemoteKeyedStateHandle handle,
            IntFunction<Long> expected)
            throws Exception {
        return fixture.assertRestores(stateBackend, handle, FIRST_KEYS + NEW_KEYS, expected);
    }
}
