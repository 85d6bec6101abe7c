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

package org.appendlog.statebackend.compaction;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendFixture;
import org.appendlog.statebackend.BackendHarness;
import org.appendlog.statebackend.log.BatchCompression;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;
import org.apache.flink.util.function.ThrowingRunnable;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.atomic.AtomicReference;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Background compaction: bounded restores, crash safety, no orphan segments. */
class CompactionTest {

    private static final int KEYS = 10_000;

    @RegisterExtension final BackendFixture fixture = new BackendFixture();

    /**
     * Records stored raw: the scenarios here are built on where segments roll and on byte
     * ratios, which compression would move; the tests parameterized by compression show that
     * compaction keeps every latest record of compressed batches too.
     */
    private AppendLogStateBackend backend(boolean compaction) {
        return backend(compaction, BatchCompression.NONE);
    }

    private AppendLogStateBackend backend(boolean compaction, BatchCompression compression) {
        return backend(compaction, "64kb", "0", compression);
    }

    private AppendLogStateBackend backend(
            boolean compaction, String segmentSize, String compactionIoRateLimit) {
        return backend(compaction, segmentSize, compactionIoRateLimit, BatchCompression.NONE);
    }

    private AppendLogStateBackend backend(
            boolean compaction,
            String segmentSize,
            String compactionIoRateLimit,
            BatchCompression compression) {
        return backend(
                compaction,
                segmentSize,
                compactionIoRateLimit,
                compression,
                AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO.defaultValue());
    }

    private AppendLogStateBackend backend(
            boolean compaction,
            String segmentSize,
            String compactionIoRateLimit,
            BatchCompression compression,
            double minDirtyRatio) {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO, minDirtyRatio);
        config.set(AppendLogOptions.COMPRESSION, compression);
        config.setString(AppendLogOptions.SEGMENT_SIZE.key(), segmentSize);
        config.setString(
                AppendLogOptions.COMPACTION_IO_RATE_LIMIT.key(), compactionIoRateLimit);
        config.set(AppendLogOptions.COMPACTION_ENABLED, compaction);
        return fixture.backend(config);
    }

    /** Rewrites every key once per checkpoint; returns the last checkpoint. */
    private IncrementalRemoteKeyedStateHandle rewriteEveryKey(
            BackendHarness harness, int fromCheckpoint, int checkpoints) throws Exception {
        return rewrite(harness, fromCheckpoint, checkpoints, 1);
    }

    /**
     * Rewrites the even keys once per checkpoint, so that the segments holding the odd keys stay
     * half live and compaction must copy them into a run.
     */
    private IncrementalRemoteKeyedStateHandle rewriteEvenKeys(
            BackendHarness harness, int fromCheckpoint, int checkpoints) throws Exception {
        return rewrite(harness, fromCheckpoint, checkpoints, 2);
    }

    private IncrementalRemoteKeyedStateHandle rewrite(
            BackendHarness harness, int fromCheckpoint, int checkpoints, int keyStep)
            throws Exception {
        IncrementalRemoteKeyedStateHandle last = null;
        for (int c = fromCheckpoint; c < fromCheckpoint + checkpoints; c++) {
            write(harness, c, keyStep);
            last = harness.checkpoint(c);
            harness.awaitCompaction();
        }
        return last;
    }

    /** Writes every {@code keyStep}-th key with the value that marks checkpoint {@code checkpoint}. */
    private static void write(BackendHarness harness, int checkpoint, int keyStep)
            throws IOException {
        for (int key = 0; key < KEYS; key += keyStep) {
            harness.put(key, (long) key * 1000 + checkpoint);
        }
    }

    private long restoreAndCheck(
            AppendLogStateBackend stateBackend,
            IncrementalRemoteKeyedStateHandle handle,
            int checkpoint)
            throws Exception {
        return restoreAndCheck(stateBackend, handle, checkpoint, checkpoint);
    }

    /** Checks that even keys were last written in {@code even}, odd ones in {@code odd}. */
    private long restoreAndCheck(
            AppendLogStateBackend stateBackend,
            IncrementalRemoteKeyedStateHandle handle,
            int even,
            int odd)
            throws Exception {
        int checkpoint = Math.max(even, odd);
        try (BackendHarness restored = fixture.restore(stateBackend, handle)) {
            for (int key = 0; key < KEYS; key++) {
                assertThat(restored.get(key))
                        .as("key %d", key)
                        .isEqualTo((long) key * 1000 + (key % 2 == 0 ? even : odd));
            }
            long live = restored.index().liveBytes();
            long read = restored.restoredBytes();
            System.out.printf(
                    "restore of checkpoint %d read %d record bytes for %d live bytes (%.2fx), %d batches%n",
                    checkpoint, read, live, (double) read / live, handleBatches(handle));
            return read / live;
        }
    }

    private static int handleBatches(IncrementalRemoteKeyedStateHandle handle) {
        return handle.getSharedState().size();
    }

    @Test
    void compactionBoundsWhatARestoreReads() throws Exception {
        AppendLogStateBackend stateBackend = backend(true);
        IncrementalRemoteKeyedStateHandle last;
        long compactions;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            last = rewriteEveryKey(harness, 1, 200);
            compactions = harness.compactor() == null ? 0 : passes(harness);
            last = harness.assertIndexDescribesTheLog(stateBackend, last);
        }
        assertThat(compactions).isPositive();
        try (BackendHarness restored = fixture.restore(stateBackend, last)) {
            double ratio =
                    (double) restored.restoredBytes() / restored.index().liveBytes();
            System.out.printf("compaction on: restore read %.2fx the live bytes%n", ratio);
            assertThat(ratio).isLessThanOrEqualTo(2.5);
            for (int key = 0; key < KEYS; key++) {
                assertThat(restored.get(key)).isEqualTo((long) key * 1000 + 200);
            }
        }
    }

    /**
     * A pass copies the records the index lists as live: segments whose records are all dead are
     * replaced without reading a byte of them. Here every checkpoint rewrites every key, and each
     * batch fills a segment of its own, so every segment but the last checkpoint's is all dead.
     */
    @Test
    void segmentsWithoutALiveRecordAreReplacedUnread() throws Exception {
        AppendLogStateBackend stateBackend = backend(true);
        IncrementalRemoteKeyedStateHandle last;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            last = rewriteEveryKey(harness, 1, 30);
            last = harness.assertIndexDescribesTheLog(stateBackend, last);
            assertThat(passes(harness)).isGreaterThanOrEqualTo(5);
            assertThat(harness.compactor().bytesRead()).as("bytes passes read").isZero();
        }
        assertThat(handleBatches(last)).as("segments the last checkpoint lists").isEqualTo(1);
        restoreAndCheck(stateBackend, last, 30);
    }

    /**
     * Checkpoints complete while passes run, and each completion makes the index forget the
     * segments no checkpoint refers to: a run written but not yet offered must not be among them,
     * or its live bytes drop out of the counts that compaction chooses segments by.
     */
    @ParameterizedTest
    @EnumSource(BatchCompression.class)
    void theIndexCountsTheLiveBytesOfRunsWrittenWhileCheckpointsComplete(
            BatchCompression compression) throws Exception {
        AppendLogStateBackend stateBackend = backend(true, compression);
        IncrementalRemoteKeyedStateHandle last = null;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            // The odd keys, written once, stay live in the runs that compaction copies them to.
            write(harness, 1, 1);
            harness.checkpoint(1);
            for (int c = 2; c <= 300; c++) {
                write(harness, c, 2);
                last = harness.checkpoint(c);
            }
            harness.assertIndexDescribesTheLog(stateBackend, last);
            assertThat(passes(harness)).isPositive();
        }
    }

    @ParameterizedTest
    @EnumSource(BatchCompression.class)
    void deletedKeysStayDeletedAndKeysPutBackAfterADeleteComeBack(BatchCompression compression)
            throws Exception {
        // Keys are deleted and put back at random, so the compacted segments hold tombstones both
        // older and newer than values of their key: each must win or lose to them as written.
        // Keys written once and never again keep their segments live and uncompacted: those
        // hold older records of every key group, so tombstones must be copied into the runs.
        AppendLogStateBackend stateBackend = backend(true, compression);
        Map<Integer, Long> expected = new HashMap<>();
        Random random = new Random(3);
        IncrementalRemoteKeyedStateHandle last = null;
        long compactions;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            for (int key = KEYS; key < 2 * KEYS; key++) {
                harness.put(key, key);
                expected.put(key, (long) key);
            }
            harness.checkpoint(1);
            for (int c = 2; c <= 40; c++) {
                for (int key = 0; key < KEYS; key++) {
                    int roll = random.nextInt(10);
                    if (roll < 2) {
                        harness.remove(key);
                        expected.remove(key);
                    } else if (roll < 5) {
                        harness.put(key, (long) key * 1000 + c);
                        expected.put(key, (long) key * 1000 + c);
                    }
                }
                last = harness.checkpoint(c);
                harness.awaitCompaction();
            }
            compactions = passes(harness);
            last = harness.assertIndexDescribesTheLog(stateBackend, last);
        }
        assertThat(compactions).isPositive();
        assertThat(expected.size()).isBetween(KEYS + KEYS / 2, 2 * KEYS - 1);
        try (BackendHarness restored = fixture.restore(stateBackend, last)) {
            for (int key = 0; key < 2 * KEYS; key++) {
                assertThat(restored.get(key)).as("key %d", key).isEqualTo(expected.get(key));
            }
            assertThat(restored.index().liveEntries()).isEqualTo(expected.size());
        }
    }

    /**
     * A log written with records stored raw (format 2, as earlier versions wrote it) and continued
     * with LZ4 after a restore: compaction copies records of both formats into compressed runs,
     * and the last checkpoint restores exactly with either setting.
     */
    @Test
    void aLogOfBothFormatsIsCompactedAndRestored() throws Exception {
        AppendLogStateBackend raw = backend(true, BatchCompression.NONE);
        AppendLogStateBackend lz4 = backend(true, BatchCompression.LZ4);
        IncrementalRemoteKeyedStateHandle third;
        try (BackendHarness harness = fixture.open(raw)) {
            third = rewriteEveryKey(harness, 1, 3);
        }
        IncrementalRemoteKeyedStateHandle last;
        long passes;
        try (BackendHarness harness = fixture.restore(lz4, third)) {
            last = rewriteEvenKeys(harness, 4, 20);
            passes = passes(harness);
        }
        assertThat(passes).as("compaction passes over the log of both formats").isPositive();
        restoreAndCheck(raw, last, 23, 3);
        restoreAndCheck(lz4, last, 23, 3);
    }

    @Test
    void withoutCompactionRestoresGrowWithEveryCheckpoint() throws Exception {
        AppendLogStateBackend stateBackend = backend(false);
        IncrementalRemoteKeyedStateHandle after50;
        IncrementalRemoteKeyedStateHandle after200;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            after50 = rewriteEveryKey(harness, 1, 50);
            after200 = rewriteEveryKey(harness, 51, 150);
        }
        long ratio50 = restoreAndCheck(stateBackend, after50, 50);
        long ratio200 = restoreAndCheck(stateBackend, after200, 200);
        assertThat(ratio50).isGreaterThanOrEqualTo(45);
        assertThat(ratio200).isGreaterThanOrEqualTo(190);
    }

    @Test
    void aFailureWhileWritingTheRunLeavesTheLogAsItWas() throws Exception {
        AppendLogStateBackend stateBackend = backend(true);
        IncrementalRemoteKeyedStateHandle last;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            rewriteEveryKey(harness, 1, 1);
            // Occupy the path of every run this backend could write (any floor the checkpoints
            // below may leave in its name): creating it fails.
            Path first = fixture.segmentFiles().get(0);
            String prefix =
                    first.getFileName().toString().replaceAll("-c\\d+-\\d{6}\\.seg$", "");
            Path dir = first.getParent();
            for (int floor = 1; floor <= 25; floor++) {
                for (int run = 0; run < 50; run++) {
                    Files.createDirectory(
                            dir.resolve(String.format("%s-c%d-run-%06d.seg", prefix, floor, run)));
                }
            }
            last = rewriteEvenKeys(harness, 2, 20);
            assertThat(passes(harness)).isZero();
        }
        restoreAndCheck(stateBackend, last, 21, 1);
    }

    @Test
    void aCrashBetweenRunAndCompletedCheckpointLosesNothing() throws Exception {
        AppendLogStateBackend stateBackend = backend(true);
        IncrementalRemoteKeyedStateHandle completed;
        IncrementalRemoteKeyedStateHandle usingRun;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            rewriteEveryKey(harness, 1, 1);
            completed = rewriteEvenKeys(harness, 2, 9);
            assertThat(passes(harness)).isPositive();
            write(harness, 11, 1);
            // This checkpoint refers to the latest run, but the job dies before it completes.
            usingRun = harness.checkpointThatNeverCompletes(11);
            assertThat(segmentNames(usingRun)).anyMatch(name -> name.contains("-run-"));
        }
        restoreAndCheck(stateBackend, completed, 10, 1);
        // Had checkpoint 11 completed at the JobManager before the task died, the JobManager
        // would have registered it, replacing the placeholders of the segments it shares.
        fixture.registry().registerAll(Collections.singletonList(usingRun), 11);
        restoreAndCheck(stateBackend, usingRun, 11);
    }

    /**
     * The first checkpoint to refer to a compaction run is aborted, and the task discards it
     * before the JobManager registered it, which deletes the run: later checkpoints must not
     * refer to the run, and later passes must still copy the entries compaction had moved into
     * it (the odd keys, written only once).
     */
    @Test
    void aRunWhoseFirstCheckpointWasAbortedIsNotReferredToAgain() throws Exception {
        AppendLogStateBackend stateBackend = backend(true);
        IncrementalRemoteKeyedStateHandle last;
        int id;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            RunTakenUp taken = checkpointTakingUpARun(harness);
            taken.abortAndDiscard(harness);

            id = taken.checkpointId + 1;
            last = checkpointAfter(harness, taken);
            assertThat(segmentNames(last)).doesNotContainAnyElementsOf(taken.runs);
            harness.confirm(last, id);
            restoreAndCheck(stateBackend, last, id, 1);

            long passesBefore = passes(harness);
            last = rewriteEvenKeys(harness, id + 1, 10);
            assertThat(passes(harness)).isGreaterThan(passesBefore);
        }
        restoreAndCheck(stateBackend, last, id + 10, 1);
    }

    /**
     * The next checkpoint is written before the abort of the one that took up a run reaches the
     * task: it lists the run as a placeholder, which it never deletes. The discarded checkpoint
     * took the run along, so the JobManager refuses the next one, as Flink's registry does with a
     * placeholder it does not know; the one after lists no run, and nothing is lost.
     */
    @Test
    void aCheckpointListingTheRunOfADiscardedCheckpointIsRefused() throws Exception {
        AppendLogStateBackend stateBackend = backend(true);
        IncrementalRemoteKeyedStateHandle last;
        int id;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            RunTakenUp taken = checkpointTakingUpARun(harness);
            id = taken.checkpointId + 1;
            IncrementalRemoteKeyedStateHandle next = checkpointAfter(harness, taken);
            assertThat(placeholders(next))
                    .as("placeholders of the next checkpoint")
                    .containsAll(taken.runs);

            taken.abortAndDiscard(harness);
            assertThat(fixture.segmentFiles())
                    .as("segments on disk")
                    .noneMatch(file -> taken.runs.contains(file.getFileName().toString()));
            assertThatThrownBy(() -> harness.acknowledge(next, id))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Attempt to reference unknown state");
            harness.backend.notifyCheckpointAborted(id);

            write(harness, id + 1, 2);
            last = harness.checkpoint(id + 1);
            assertThat(segmentNames(last)).doesNotContainAnyElementsOf(taken.runs);
        }
        restoreAndCheck(stateBackend, last, id + 1, 1);
    }

    /**
     * Checkpoint 4 appends nothing (an idle interval); 5, written before 4's completion reached
     * the task, appends to the segment the log of 4 ends in and rolls it. 4 completes and a pass
     * over its log compacts that segment; 5 completes before the pass is done, and the index
     * places the latest record of every key in the compacted segment, in 5's batch, which the pass
     * does not replace. The index names batches, so no key moves into the run, to its older value:
     * the result is taken, and 5's records stay the latest, also through later passes over 5's
     * segment. (Until the index named batches, such a result had to be refused.)
     */
    @Test
    void aPassDuringWhichACheckpointCompletedIntoACompactedSegmentLosesNothing() throws Exception {
        // Passes read at 2 MB/s, so that 5 completes while the pass over 4's log runs.
        AppendLogStateBackend stateBackend = backend(true, "600kb", "2mb");
        IncrementalRemoteKeyedStateHandle last;
        int id = 4;
        int next;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            IncrementalRemoteKeyedStateHandle third = rewriteEveryKey(harness, 1, id - 1);
            IncrementalRemoteKeyedStateHandle fourth = harness.checkpointThatNeverCompletes(id);
            write(harness, id + 1, 1);
            IncrementalRemoteKeyedStateHandle fifth = harness.checkpointThatNeverCompletes(id + 1);
            assertThat(segmentNames(fourth)).isEqualTo(segmentNames(third));
            assertThat(segmentNames(fifth)).isEqualTo(segmentNames(third));
            harness.acknowledge(fourth, id);
            harness.acknowledge(fifth, id + 1);
            long passesBefore = passes(harness);
            harness.complete(id);
            harness.complete(id + 1);
            harness.awaitCompaction();
            assertThat(passes(harness)).as("passes over 4's log").isGreaterThan(passesBefore);
            assertThat(harness.compactionWaits())
                    .as("the pass's result waits for the next checkpoint")
                    .isTrue();
            // Settling takes checkpoints without changes: the first to take the result up.
            next =
                    (int) harness.assertIndexDescribesTheLog(stateBackend, fifth).getCheckpointId()
                            + 1;
            assertThat(next).isGreaterThan(id + 2);
            last = rewriteEvenKeys(harness, next, 10);
            last = harness.assertIndexDescribesTheLog(stateBackend, last);
        }
        restoreAndCheck(stateBackend, last, next + 9, id + 1);
    }

    /**
     * Checkpoint 3's asynchronous phase lists its batches before 2's completion reaches the task,
     * 4's after, but before 3 was given its batch (as 3 opens its manifest stream): 4 lists 2's
     * log. Both complete, 3 first. 4's log holds 2's batch, not 3's, and 4's own batch carries
     * only what changed after 2: 3's batch carried changes from before (key 0), which the index
     * had learned there. It cannot follow 4's log batch by batch, so the checkpoint after 4 is
     * full, and the index learns every entry anew from it.
     */
    @Test
    void aCheckpointCompletedConcurrentCheckpointsThanTheLastMakesTheNextOneFull() throws Exception {
        // Every batch fills a segment of its own.
        AppendLogStateBackend stateBackend = backend(true, "1kb", "0");
        try (BackendHarness harness = fixture.open(stateBackend)) {
            ConcurrentCheckpoints written = fourthOnTheCompletedLog(harness, () -> {}, () -> {});
            // Before the registry swaps the registered handles in for the placeholders.
            List<String> writtenByThird = ownSegments(written.third);
            harness.acknowledge(written.third, 3);
            assertThat(segmentNames(written.fourth)).doesNotContainAnyElementsOf(writtenByThird);
            harness.acknowledge(written.fourth, 4);
            harness.complete(3);
            long fullBefore = harness.fullBatches();
            harness.complete(4);
            assertThat(harness.compactionWaits()).isTrue();
            IncrementalRemoteKeyedStateHandle last =
                    harness.assertIndexDescribesTheLog(stateBackend, written.fourth);
            assertThat(harness.fullBatches()).isEqualTo(fullBefore + 1);
            assertThat(harness.get(0)).isEqualTo(2L);
            fixture.assertRestores(
                    stateBackend,
                    last,
                    KEYS,
                    key -> key == 0 ? 2L : (long) key * 1000 + 1);
        }
    }

    /**
     * 3 lists the log of 1 before 2's completion reaches the task, 4 after 3 was given its batch:
     * 4 lists 3's log, whose batch carries 2's changes again, not 2's; and 5, written before
     * either completes, lists 4's. 3 completes first, which drops 2's segment; 4 and 5, which do
     * not list it, are accepted, and their completions need no full checkpoint. (Listing 2's
     * log, the JobManager refused them: "Attempt to reference unknown state".)
     */
    @Test
    void checkpointsListTheLogOfAnEarlierOneThatHoldsTheChangesOfTheCompletedLog()
            throws Exception {
        AppendLogStateBackend stateBackend = backend(true, "1kb", "0");
        try (BackendHarness harness = fixture.open(stateBackend)) {
            ConcurrentCheckpoints written = checkpointConcurrentCheckpoints(harness);
            harness.put(3, valueWrittenConcurrently(3, 3));
            IncrementalRemoteKeyedStateHandle fifth = harness.checkpointThatNeverCompletes(5);
            assertThat(placeholders(fifth))
                    .containsAll(ownSegments(written.third))
                    .containsAll(ownSegments(written.fourth));
            assertThat(segmentNames(fifth)).doesNotContainAnyElementsOf(written.secondsOwn);
            harness.acknowledge(written.third, 3);
            long fullBefore = harness.fullBatches();
            harness.complete(3);
            harness.acknowledge(written.fourth, 4);
            harness.acknowledge(fifth, 5);
            harness.complete(4);
            harness.complete(5);
            assertFollowedAndRestored(harness, stateBackend, fifth, fullBefore, 3);
        }
    }

    /**
     * 2 and 3 both list the log of 1; 2 completes, and 4 lists 3's log; 3 completes, and 5 lists
     * 3's; 4 completes, and 6 is written. 4's batch carries what changed after 2, 5's what changed
     * after 3, and 3's what changed after 1: no batch of 5's log alone carries again what 4's
     * does, but 3's and 5's together do. 6 lists 5's log, and is accepted once 5's completion
     * dropped 4's segment. The index, which learns 5's batch alone, cannot follow: an entry that
     * 4 wrote is latest in 3's batch again, so the checkpoint after 6 is full.
     */
    @Test
    void aCheckpointListsALogWhoseBatchesTogetherCarryTheChangesOfTheCompletedOne()
            throws Exception {
        AppendLogStateBackend stateBackend = backend(true, "1kb", "0");
        try (BackendHarness harness = fixture.open(stateBackend)) {
            rewriteEveryKey(harness, 1, 1);
            harness.put(0, valueWrittenConcurrently(0, 4));
            RunnableFuture<SnapshotResult<KeyedStateHandle>> second = harness.snapshot(2);
            harness.put(1, valueWrittenConcurrently(1, 4));
            RunnableFuture<SnapshotResult<KeyedStateHandle>> third = harness.snapshot(3);
            IncrementalRemoteKeyedStateHandle secondHandle = BackendHarness.written(second);
            harness.acknowledge(BackendHarness.written(third), 3);
            harness.confirm(secondHandle, 2);
            harness.put(2, valueWrittenConcurrently(2, 4));
            IncrementalRemoteKeyedStateHandle fourth = harness.checkpointThatNeverCompletes(4);
            List<String> writtenByFourth = ownSegments(fourth);
            harness.acknowledge(fourth, 4);
            harness.complete(3);
            harness.put(3, valueWrittenConcurrently(3, 4));
            IncrementalRemoteKeyedStateHandle fifth = harness.checkpointThatNeverCompletes(5);
            List<String> writtenByFifth = ownSegments(fifth);
            harness.acknowledge(fifth, 5);
            harness.complete(4);
            harness.put(4, valueWrittenConcurrently(4, 4));
            IncrementalRemoteKeyedStateHandle sixth = harness.checkpointThatNeverCompletes(6);
            assertThat(placeholders(sixth)).containsAll(writtenByFifth);
            assertThat(segmentNames(sixth)).doesNotContainAnyElementsOf(writtenByFourth);
            long fullBefore = harness.fullBatches();
            harness.complete(5);
            harness.acknowledge(sixth, 6);
            harness.complete(6);
            fixture.assertRestores(
                    stateBackend, sixth, KEYS, key -> valueWrittenConcurrently(key, 4));
            assertFollowedAndRestored(harness, stateBackend, sixth, fullBefore + 1, 4);
        }
    }

    /**
     * As above, but 4 completes first, and 3 never does. 4's log holds everything, but 3's batch,
     * which the index never learned, and not 2's, which it did: the checkpoint after 4 is full.
     */
    @Test
    void aCheckpointOnTheLogOfAnEarlierOneThatCompletesFirstMakesTheNextOneFull()
            throws Exception {
        AppendLogStateBackend stateBackend = backend(true, "1kb", "0");
        try (BackendHarness harness = fixture.open(stateBackend)) {
            ConcurrentCheckpoints written = checkpointConcurrentCheckpoints(harness);
            harness.acknowledge(written.third, 3);
            harness.confirm(written.fourth, 4);
            assertThat(harness.compactionWaits()).isTrue();
            fixture.assertRestores(
                    stateBackend, written.fourth, KEYS, key -> valueWrittenConcurrently(key, 2));
            long fullBefore = harness.fullBatches();
            assertFollowedAndRestored(harness, stateBackend, written.fourth, fullBefore + 1, 2);
        }
    }

    /**
     * As above, but the task discards 3 before the JobManager registered it, deleting its batch:
     * the JobManager refuses 4, whose placeholder it does not know. The next checkpoint lists 2's
     * log and carries 3's and 4's changes again; once it completes, no segment of 3 or 4 is left.
     */
    @Test
    void aCheckpointOnTheLogOfAnEarlierOneThatIsDiscardedIsRefused() throws Exception {
        AppendLogStateBackend stateBackend = backend(true, "1kb", "0");
        IncrementalRemoteKeyedStateHandle last;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            ConcurrentCheckpoints written = checkpointConcurrentCheckpoints(harness);
            written.third.discardState();
            harness.backend.notifyCheckpointAborted(3);
            assertThatThrownBy(() -> harness.acknowledge(written.fourth, 4))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Attempt to reference unknown state");
            harness.backend.notifyCheckpointAborted(4);
            last = harness.checkpoint(5);
            assertThat(fixture.segmentFiles().stream().map(p -> p.toUri().getPath()))
                    .as("segments on disk once checkpoint 5 completed")
                    .containsExactlyInAnyOrderElementsOf(segmentPaths(last));
        }
        fixture.assertRestores(stateBackend, last, KEYS, key -> valueWrittenConcurrently(key, 2));
    }

    /**
     * Every key written at checkpoint 1; 3 lists 1's log before 2 (key 0) completes, carrying 2's
     * and its own changes (key 1) again; 4 (key 2) lists its batches after. Neither is
     * acknowledged.
     */
    private ConcurrentCheckpoints checkpointConcurrentCheckpoints(BackendHarness harness) throws Exception {
        rewriteEveryKey(harness, 1, 1);
        harness.put(0, valueWrittenConcurrently(0, 2));
        RunnableFuture<SnapshotResult<KeyedStateHandle>> second = harness.snapshot(2);
        harness.put(1, valueWrittenConcurrently(1, 2));
        IncrementalRemoteKeyedStateHandle third = BackendHarness.written(harness.snapshot(3));
        IncrementalRemoteKeyedStateHandle secondHandle = BackendHarness.written(second);
        List<String> writtenBySecond = ownSegments(secondHandle);
        harness.confirm(secondHandle, 2);
        harness.put(2, valueWrittenConcurrently(2, 2));
        IncrementalRemoteKeyedStateHandle fourth = harness.checkpointThatNeverCompletes(4);
        assertThat(placeholders(fourth)).containsAll(ownSegments(third));
        assertThat(segmentNames(fourth)).doesNotContainAnyElementsOf(writtenBySecond);
        return new ConcurrentCheckpoints(third, fourth, writtenBySecond);
    }

    /**
     * Every key written at checkpoint 1, key 0 again for 2; 3 (after {@code beforeThird}) lists
     * 1's log, and as it opens its manifest stream, before it was given its batch, 2 completes
     * and 4 (after {@code beforeFourth}) lists 2's log. Neither 3 nor 4 is acknowledged.
     */
    private ConcurrentCheckpoints fourthOnTheCompletedLog(
            BackendHarness harness,
            ThrowingRunnable<Exception> beforeThird,
            ThrowingRunnable<Exception> beforeFourth)
            throws Exception {
        rewriteEveryKey(harness, 1, 1);
        harness.put(0, 2);
        RunnableFuture<SnapshotResult<KeyedStateHandle>> second = harness.snapshot(2);
        beforeThird.run();
        List<String> writtenBySecond = new ArrayList<>();
        AtomicReference<IncrementalRemoteKeyedStateHandle> fourth = new AtomicReference<>();
        IncrementalRemoteKeyedStateHandle third =
                writtenWhileListed(
                        harness,
                        3,
                        () -> {
                            IncrementalRemoteKeyedStateHandle secondHandle =
                                    BackendHarness.written(second);
                            writtenBySecond.addAll(ownSegments(secondHandle));
                            harness.confirm(secondHandle, 2);
                            beforeFourth.run();
                            fourth.set(harness.checkpointThatNeverCompletes(4));
                        });
        return new ConcurrentCheckpoints(third, fourth.get(), writtenBySecond);
    }

    /** Checkpoint 3, written on an earlier log than 2's, and 4, written after 2 completed. */
    private static final class ConcurrentCheckpoints {
        final IncrementalRemoteKeyedStateHandle third;
        final IncrementalRemoteKeyedStateHandle fourth;
        /** The segments completed checkpoint 2 wrote. */
        final List<String> secondsOwn;

        ConcurrentCheckpoints(
                IncrementalRemoteKeyedStateHandle third,
                IncrementalRemoteKeyedStateHandle fourth,
                List<String> secondsOwn) {
            this.third = third;
            this.fourth = fourth;
            this.secondsOwn = secondsOwn;
        }
    }

    /**
     * Checks that the index describes the log from {@code completed} on, that the backend appended
     * {@code fullBatches} full batches by then, and that the last checkpoint restores keys 0 to
     * {@code lastKey} as written concurrently.
     */
    private void assertFollowedAndRestored(
            BackendHarness harness,
            AppendLogStateBackend stateBackend,
            IncrementalRemoteKeyedStateHandle completed,
            long fullBatches,
            int lastKey)
            throws Exception {
        IncrementalRemoteKeyedStateHandle last =
                harness.assertIndexDescribesTheLog(stateBackend, completed);
        assertThat(harness.fullBatches()).as("full batches").isEqualTo(fullBatches);
        fixture.assertRestores(
                stateBackend, last, KEYS, key -> valueWrittenConcurrently(key, lastKey));
    }

    /** The value of {@code key} once keys 0 to {@code last} were written concurrently. */
    private static Long valueWrittenConcurrently(int key, int last) {
        return key <= last ? (long) key + 2 : (long) key * 1000 + 1;
    }

    /**
     * As above, 3 lists the log of 1 and 4 that of 2 (listed before 3 was given its batch); 3
     * completes, and a pass over its log compacts 1's half dead segment. 5 takes the run up, and
     * 4 completes while 5 writes its manifest: the index cannot follow 4's log, so the run is
     * dropped, but 5, which listed it, must still write its checkpoint, giving the run to Flink
     * (it failed, and with it the job, when the log deleted the run under it). 4's completion
     * dropped 3's segment, which 5 lists, so the JobManager refuses 5; it registers 5's own files
     * first, and deletes them once the next checkpoint, which is full, completes.
     */
    @Test
    void aRunDroppedWhileItsCheckpointWritesIsLeftToThatCheckpoint() throws Exception {
        // Every batch fills a segment of its own; 1's segment is compacted once half dead.
        AppendLogStateBackend stateBackend = backend(true, "1kb", "0", BatchCompression.NONE, 0.2);
        IncrementalRemoteKeyedStateHandle last;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            ConcurrentCheckpoints written =
                    fourthOnTheCompletedLog(
                            harness, () -> write(harness, 3, 2), harness::awaitCompaction);
            harness.acknowledge(written.third, 3);
            harness.acknowledge(written.fourth, 4);
            harness.complete(3);
            harness.awaitCompaction();
            assertThat(harness.compactionWaits()).as("a run offered").isTrue();

            write(harness, 5, 2);
            IncrementalRemoteKeyedStateHandle fifth =
                    writtenWhileListed(harness, 5, () -> harness.complete(4));
            assertThat(ownSegments(fifth)).anyMatch(name -> name.contains("-run-"));
            assertThatThrownBy(() -> harness.acknowledge(fifth, 5))
                    .isInstanceOf(IllegalStateException.class)
                    .hasMessageContaining("Attempt to reference unknown state");

            long fullBefore = harness.fullBatches();
            write(harness, 6, 2);
            last = harness.checkpoint(6);
            assertThat(harness.fullBatches()).isEqualTo(fullBefore + 1);
            assertThat(fixture.segmentFiles())
                    .as("segments on disk once checkpoint 6 completed")
                    .noneMatch(file -> file.getFileName().toString().contains("-run-"));
        }
        restoreAndCheck(stateBackend, last, 6, 1);
    }

    /**
     * The next checkpoint lists its batches while the one that took up a run writes its manifest,
     * before that one was given the run: it lists no run, and both complete. The log no longer
     * holds the run, but the index had moved the run's entries into it. Later passes must not
     * take their records, which are again where they were before, for dead: the checkpoint after
     * is full, and the index learns from it anew.
     */
    @Test
    void aCompletedCheckpointWithoutTheRunItsPredecessorTookUpLosesNothing() throws Exception {
        AppendLogStateBackend stateBackend = backend(true);
        IncrementalRemoteKeyedStateHandle last;
        int from;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            AtomicReference<RunnableFuture<SnapshotResult<KeyedStateHandle>>> nextPhase =
                    new AtomicReference<>();
            List<IncrementalRemoteKeyedStateHandle> listedMeanwhile = new ArrayList<>();
            RunTakenUp taken =
                    checkpointTakingUpARun(
                            harness,
                            id -> {
                                RunnableFuture<SnapshotResult<KeyedStateHandle>> takerPhase =
                                        harness.snapshot(
                                                id,
                                                streamsRunningFirst(
                                                        () ->
                                                                listedMeanwhile.add(
                                                                        BackendHarness.written(
                                                                                nextPhase.get()))));
                                // The next barrier; its asynchronous phase runs as the taker's
                                // opens its manifest stream.
                                write(harness, id + 1, 2);
                                nextPhase.set(harness.snapshot(id + 1));
                                return BackendHarness.written(takerPhase);
                            });
            int id = taken.checkpointId + 1;
            assertThat(listedMeanwhile).hasSize(1);
            IncrementalRemoteKeyedStateHandle next = listedMeanwhile.get(0);
            assertThat(segmentNames(next)).doesNotContainAnyElementsOf(taken.runs);
            harness.acknowledge(taken.handle, taken.checkpointId);
            harness.acknowledge(next, id);
            harness.complete(taken.checkpointId);
            harness.awaitCompaction();
            long fullBefore = harness.fullBatches();
            harness.complete(id);
            harness.awaitCompaction();
            from = (int) harness.assertIndexDescribesTheLog(stateBackend, next)
                    .getCheckpointId() + 1;
            assertThat(harness.fullBatches()).isEqualTo(fullBefore + 1);

            long passesBefore = passes(harness);
            last = rewriteEvenKeys(harness, from, 20);
            assertThat(passes(harness)).isGreaterThan(passesBefore);
            last = harness.assertIndexDescribesTheLog(stateBackend, last);
        }
        // The odd keys, written once at checkpoint 1, went through the passes after.
        restoreAndCheck(stateBackend, last, from + 19, 1);
    }

    /**
     * The checkpoint that took up a run is acknowledged but never completes, and no abort
     * arrives; the next one, which lists the run as a placeholder, completes. It takes the run up
     * with no full checkpoint, and compaction goes on, not waiting for the lost checkpoint.
     */
    @Test
    void compactionGoesOnWhenTheCheckpointThatTookUpARunIsSubsumed() throws Exception {
        AppendLogStateBackend stateBackend = backend(true);
        IncrementalRemoteKeyedStateHandle last;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            RunTakenUp taken = checkpointTakingUpARun(harness);
            harness.acknowledge(taken.handle, taken.checkpointId);
            int from = taken.checkpointId + 1;
            long fullBefore = harness.fullBatches();
            IncrementalRemoteKeyedStateHandle next = checkpointAfter(harness, taken);
            assertThat(placeholders(next)).containsAll(taken.runs);
            harness.confirm(next, from);
            harness.awaitCompaction();
            harness.assertIndexDescribesTheLog(stateBackend, next);
            assertThat(harness.fullBatches()).isEqualTo(fullBefore);
            long passesBefore = passes(harness);

            last = rewriteEvenKeys(harness, from + 1, 20);
            assertThat(passes(harness)).isGreaterThan(passesBefore);
            last = harness.assertIndexDescribesTheLog(stateBackend, last);
            // The odd keys, written once, went through the run and the passes after.
            restoreAndCheck(stateBackend, last, from + 20, 1);
        }
    }

    /** Rewrites the even keys for the checkpoint after {@code taken} and writes it. */
    private static IncrementalRemoteKeyedStateHandle checkpointAfter(
            BackendHarness harness, RunTakenUp taken) throws Exception {
        int id = taken.checkpointId + 1;
        write(harness, id, 2);
        return harness.checkpointThatNeverCompletes(id);
    }

    /** A checkpoint that took up a compaction run no completed checkpoint refers to yet. */
    private static final class RunTakenUp {
        final IncrementalRemoteKeyedStateHandle handle;
        final int checkpointId;
        /** The runs it lists with real handles (not placeholders): it owns them. */
        final List<String> runs;

        RunTakenUp(IncrementalRemoteKeyedStateHandle handle, int checkpointId, List<String> runs) {
            this.handle = handle;
            this.checkpointId = checkpointId;
            this.runs = runs;
        }

        /** The checkpoint is aborted, and the task discards it before the JobManager registered it. */
        void abortAndDiscard(BackendHarness harness) throws Exception {
            handle.discardState();
            harness.backend.notifyCheckpointAborted(checkpointId);
        }
    }

    /**
     * Rewrites the even keys, confirming each checkpoint, until one takes up a run; that one is
     * left unconfirmed.
     */
    private RunTakenUp checkpointTakingUpARun(BackendHarness harness) throws Exception {
        return checkpointTakingUpARun(harness, harness::checkpointThatNeverCompletes);
    }

    /** Likewise, the checkpoint that takes up the run written by {@code taker}. */
    private RunTakenUp checkpointTakingUpARun(BackendHarness harness, CheckpointWriter taker)
            throws Exception {
        rewriteEveryKey(harness, 1, 1);
        for (int id = 2; id < 40; id++) {
            write(harness, id, 2);
            // A finished pass waits for the next checkpoint to take its run up.
            if (harness.compactionWaits()) {
                IncrementalRemoteKeyedStateHandle handle = taker.write(id);
                List<String> runs =
                        ownSegments(handle).stream()
                                .filter(name -> name.contains("-run-"))
                                .collect(Collectors.toList());
                assertThat(runs).as("runs checkpoint %d took up", id).isNotEmpty();
                return new RunTakenUp(handle, id, runs);
            }
            harness.checkpoint(id);
            harness.awaitCompaction();
        }
        throw new AssertionError("no checkpoint took up a compaction run in 40 checkpoints");
    }

    /** Writes checkpoint {@code id}: its synchronous and asynchronous phases. */
    @FunctionalInterface
    private interface CheckpointWriter {
        IncrementalRemoteKeyedStateHandle write(int id) throws Exception;
    }

    /**
     * Takes checkpoint {@code id}, whose asynchronous phase runs {@code meanwhile} once it has
     * listed its batches and appended its own, before it is given its segments.
     */
    private static IncrementalRemoteKeyedStateHandle writtenWhileListed(
            BackendHarness harness, int id, ThrowingRunnable<Exception> meanwhile)
            throws Exception {
        return BackendHarness.written(harness.snapshot(id, streamsRunningFirst(meanwhile)));
    }

    /** Streams in memory; {@code first} runs as the first one is opened (a manifest's). */
    private static CheckpointStreamFactory streamsRunningFirst(ThrowingRunnable<Exception> first) {
        return new MemCheckpointStreamFactory(Integer.MAX_VALUE) {
            private boolean ran;

            @Override
            public CheckpointStateOutputStream createCheckpointStateOutputStream(
                    CheckpointedStateScope scope) throws IOException {
                if (!ran) {
                    ran = true;
                    ThrowingRunnable.unchecked(first).run();
                }
                return super.createCheckpointStateOutputStream(scope);
            }
        };
    }

    /**
     * The next barrier comes before the last checkpoint's completion reaches the task (as it may
     * with a short interval): the next batch carries the last one's changes again, and the index
     * places them there. Once the last checkpoint completes, a pass over its log must not take
     * its records for dead, since the next checkpoint may be aborted and the one after it carries
     * only what changed after the completed one.
     */
    @Test
    void aPassKeepsTheRecordsThatALaterCheckpointWroteAgainBeforeItWasAborted() throws Exception {
        AppendLogStateBackend stateBackend = backend(true);
        IncrementalRemoteKeyedStateHandle last;
        int id = 4;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            rewriteEveryKey(harness, 1, id - 1);
            write(harness, id, 1);
            IncrementalRemoteKeyedStateHandle completing = harness.checkpointThatNeverCompletes(id);
            // Written before checkpoint 4's completion reaches the task: it carries 4's changes.
            IncrementalRemoteKeyedStateHandle aborted = harness.checkpointThatNeverCompletes(id + 1);
            long passesBefore = passes(harness);
            harness.confirm(completing, id);
            harness.awaitCompaction();
            assertThat(passes(harness)).as("passes over checkpoint 4's log").isGreaterThan(passesBefore);
            aborted.discardState();
            harness.backend.notifyCheckpointAborted(id + 1);
            // Carries what changed after checkpoint 4: nothing.
            last = harness.checkpoint(id + 2);
        }
        restoreAndCheck(stateBackend, last, id);
    }

    @Test
    void noSegmentOutlivesTheCheckpointsThatReferToIt() throws Exception {
        AppendLogStateBackend stateBackend = backend(true);
        IncrementalRemoteKeyedStateHandle last;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            last = rewriteEveryKey(harness, 1, 60);
        }
        // While the last checkpoint is retained, exactly its segments are on disk.
        Set<String> referenced = segmentPaths(last);
        Set<String> onDisk =
                fixture.segmentFiles().stream()
                        .map(p -> p.toUri().getPath())
                        .collect(Collectors.toSet());
        assertThat(onDisk).isEqualTo(referenced);

        // The job finishes: its checkpoints are discarded, and with them every segment.
        fixture.registry().unregisterUnusedState(Long.MAX_VALUE);
        assertThat(fixture.segmentFiles()).isEmpty();
    }

    private static long passes(BackendHarness harness) {
        return harness.compactor().passes();
    }

    /**
     * The segments a checkpoint lists as its own, not as placeholders: it wrote them or took them
     * up.
     */
    private static List<String> ownSegments(IncrementalRemoteKeyedStateHandle handle) {
        return handle.getSharedState().stream()
                .filter(h -> !(h.getHandle() instanceof PlaceholderStreamStateHandle))
                .map(HandleAndLocalPath::getLocalPath)
                .collect(Collectors.toList());
    }

    /** The segments a checkpoint lists as placeholders: others wrote them or took them up. */
    private static List<String> placeholders(IncrementalRemoteKeyedStateHandle handle) {
        List<String> names = segmentNames(handle);
        names.removeAll(ownSegments(handle));
        return names;
    }

    private static List<String> segmentNames(IncrementalRemoteKeyedStateHandle handle) {
        return handle.getSharedState().stream()
                .map(HandleAndLocalPath::getLocalPath)
                .collect(Collectors.toList());
    }

    private static Set<String> segmentPaths(IncrementalRemoteKeyedStateHandle handle) {
        return handle.getSharedState().stream()
                .map(h -> ((FileStateHandle) h.getHandle()).getFilePath().toUri().getPath())
                .collect(Collectors.toSet());
    }
}
