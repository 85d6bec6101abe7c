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

package org.appendlog.statebackend;

import org.appendlog.statebackend.log.BatchCompression;
import org.appendlog.statebackend.log.BatchFormat;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.Collections;
import java.util.concurrent.RunnableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/** A checkpoint writes only what changed since the previous one, and restores exactly. */
class IncrementalCheckpointTest {

    @RegisterExtension final BackendFixture fixture = new BackendFixture();

    @Test
    void secondCheckpointWritesOnlyTheChangedEntries() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        IncrementalRemoteKeyedStateHandle second;
        long firstSize;
        long bytesOnDiskAfterFirst;
        long bytesOnDiskAfterSecond;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            for (int key = 0; key < 100_000; key++) {
                harness.put(key, key);
            }
            IncrementalRemoteKeyedStateHandle first = harness.checkpoint(1);
            firstSize = first.getCheckpointedSize();
            bytesOnDiskAfterFirst = fixture.segmentBytes();

            for (int key = 0; key < 100_000; key += 100) {
                harness.put(key, -key);
            }
            second = harness.checkpoint(2);
            bytesOnDiskAfterSecond = fixture.segmentBytes();

            System.out.printf(
                    "first checkpoint %d bytes, second %d bytes (%.2f%%); segment bytes on disk %d -> %d%n",
                    firstSize,
                    second.getCheckpointedSize(),
                    100.0 * second.getCheckpointedSize() / firstSize,
                    bytesOnDiskAfterFirst,
                    bytesOnDiskAfterSecond);
        }
        // 100 000 entries of about 14 bytes, compressed (LZ4) to about 9
        assertThat(firstSize).isGreaterThan(100_000L * 5);
        assertThat(second.getCheckpointedSize()).isLessThan((long) (firstSize * 0.03));
        assertThat(bytesOnDiskAfterSecond - bytesOnDiskAfterFirst)
                .isPositive()
                .isLessThan((long) (bytesOnDiskAfterFirst * 0.03));

        fixture.assertRestores(
                stateBackend, second, 100_000, key -> key % 100 == 0 ? (long) -key : key);
    }

    /**
     * The full size a checkpoint reports is what its segments hold now, although an earlier
     * checkpoint first referred to the same, then shorter, segment.
     */
    @Test
    void aCheckpointReportsTheFullSizeOfTheSegmentsItRefersTo() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        try (BackendHarness harness = BackendHarness.open(stateBackend, BackendHarness.newRegistry())) {
            for (int key = 0; key < 10_000; key++) {
                harness.put(key, key);
            }
            IncrementalRemoteKeyedStateHandle first = harness.checkpoint(1);
            long afterFirst = fixture.segmentBytes();
            for (int key = 0; key < 10_000; key += 10) {
                harness.put(key, -key);
            }
            IncrementalRemoteKeyedStateHandle second = harness.checkpointThatNeverCompletes(2);
            assertThat(fixture.segmentBytes()).isGreaterThan(afterFirst);
            assertThat(second.getSharedStateHandles()).hasSize(1);
            assertThat(second.getStateSize())
                    .isEqualTo(
                            fixture.segmentBytes()
                                    + second.getMetaDataStateHandle().getStateSize());
            // The segment that checkpoint 1 registered is listed by a placeholder, which the
            // JobManager replaces with the registered handle.
            assertThat(second.getSharedStateHandles().get(0).getHandle())
                    .isInstanceOf(PlaceholderStreamStateHandle.class)
                    .extracting(StreamStateHandle::getStreamStateHandleID)
                    .isEqualTo(first.getSharedStateHandles().get(0).getHandle().getStreamStateHandleID());
        }
    }

    /**
     * The task discards a checkpoint that the JobManager never registered (the task failed, or
     * the checkpoint was aborted, after its asynchronous part), and Flink then deletes the shared
     * state its handle lists. That must not take the segments of the completed checkpoint along
     * (seen in a job: the restore after a failure found its first segment gone).
     */
    @Test
    void aCheckpointDiscardedBeforeItWasRegisteredLeavesTheCompletedOnesSegments() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        IncrementalRemoteKeyedStateHandle third;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            for (int key = 0; key < 10_000; key++) {
                harness.put(key, key);
            }
            IncrementalRemoteKeyedStateHandle first = harness.checkpoint(1);
            for (int key = 0; key < 10_000; key += 10) {
                harness.put(key, -key);
            }
            harness.checkpointThatNeverCompletes(2).discardState();
            fixture.assertRestores(stateBackend, first, 10_000, key -> (long) key);

            for (int key = 0; key < 10_000; key += 7) {
                harness.put(key, 7L * key);
            }
            third = harness.checkpoint(3);
        }
        // Checkpoint 3 also carries the changes that checkpoint 2 held.
        fixture.assertRestores(
                stateBackend,
                third,
                10_000,
                key -> key % 7 == 0 ? 7L * key : key % 10 == 0 ? (long) -key : key);
    }

    /**
     * The first checkpoint, the only one to refer to the segment it opened, is discarded before
     * it was registered, which deletes that segment: the next checkpoint must not append to it.
     */
    @Test
    void aCheckpointAfterADiscardedOneDoesNotAppendToTheSegmentThatWentWithIt() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        IncrementalRemoteKeyedStateHandle second;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            for (int key = 0; key < 1_000; key++) {
                harness.put(key, key);
            }
            harness.checkpointThatNeverCompletes(1).discardState();
            for (int key = 0; key < 1_000; key += 3) {
                harness.put(key, -key);
            }
            second = harness.checkpoint(2);
        }
        fixture.assertRestores(
                stateBackend, second, 1_000, key -> key % 3 == 0 ? (long) -key : key);
    }

    @Test
    void removedEntriesStayRemovedAfterRestore() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        IncrementalRemoteKeyedStateHandle handle;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            for (int key = 0; key < 1_000; key++) {
                harness.put(key, key);
            }
            harness.checkpoint(1);
            for (int key = 0; key < 1_000; key += 2) {
                harness.remove(key);
            }
            handle = harness.checkpoint(2);
        }
        fixture.assertRestores(
                stateBackend, handle, 1_000, key -> key % 2 == 0 ? null : (long) key);
    }

    /**
     * The asynchronous part of checkpoint 1 runs after that of checkpoint 2 (two concurrent
     * checkpoints): each still holds exactly the changes before its own barrier.
     */
    @Test
    void checkpointsWhoseAsynchronousPartsRunOutOfOrderHoldTheirOwnChanges() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        IncrementalRemoteKeyedStateHandle first;
        IncrementalRemoteKeyedStateHandle second;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            for (int key = 0; key < 1_000; key++) {
                harness.put(key, 1);
            }
            RunnableFuture<SnapshotResult<KeyedStateHandle>> one = harness.snapshot(1);
            for (int key = 0; key < 1_000; key += 2) {
                harness.put(key, 2);
            }
            RunnableFuture<SnapshotResult<KeyedStateHandle>> two = harness.snapshot(2);
            for (int key = 0; key < 1_000; key++) {
                harness.put(key, 3);
            }
            two.run();
            one.run();
            first = (IncrementalRemoteKeyedStateHandle) one.get().getJobManagerOwnedSnapshot();
            second = (IncrementalRemoteKeyedStateHandle) two.get().getJobManagerOwnedSnapshot();
        }
        fixture.assertRestores(stateBackend, first, 1_000, key -> 1L);
        fixture.assertRestores(stateBackend, second, 1_000, key -> key % 2 == 0 ? 2L : 1L);
    }

    /** A checkpoint cancelled before its asynchronous part ran: the next one carries its changes. */
    @Test
    void theChangesOfACheckpointCancelledBeforeItsAsynchronousPartReachTheNext() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        IncrementalRemoteKeyedStateHandle handle;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            for (int key = 0; key < 1_000; key++) {
                harness.put(key, key);
            }
            harness.checkpoint(1);
            for (int key = 0; key < 1_000; key += 3) {
                harness.put(key, -key);
            }
            harness.snapshot(2).cancel(true);
            for (int key = 1; key < 1_000; key += 3) {
                harness.put(key, -key);
            }
            handle = harness.checkpoint(3);
        }
        fixture.assertRestores(
                stateBackend, handle, 1_000, key -> key % 3 == 2 ? (long) key : (long) -key);
    }

    /** Removed and written again between two checkpoints: the entry is restored with its value. */
    @Test
    void anEntryRemovedAndWrittenAgainIsRestoredWithItsValue() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        IncrementalRemoteKeyedStateHandle handle;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            for (int key = 0; key < 100; key++) {
                harness.put(key, key);
            }
            harness.checkpoint(1);
            for (int key = 0; key < 100; key++) {
                harness.remove(key);
                if (key % 2 == 0) {
                    harness.put(key, 1_000 + key);
                }
            }
            handle = harness.checkpoint(2);
        }
        fixture.assertRestores(
                stateBackend, handle, 100, key -> key % 2 == 0 ? 1_000L + key : null);
    }

    /**
     * Written, removed and written again in three checkpoints, each in a batch of its own: the
     * restore neither resurrects a removed entry nor lets a tombstone hide a later value.
     */
    @Test
    void removalsAndRewritesInLaterCheckpointsWinOverOlderRecords() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        IncrementalRemoteKeyedStateHandle handle;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            for (int key = 0; key < 300; key++) {
                harness.put(key, key);
            }
            harness.checkpoint(1);
            for (int key = 0; key < 300; key += 3) {
                harness.remove(key);
                harness.put(key + 1, -key);
            }
            harness.checkpoint(2);
            for (int key = 0; key < 300; key += 6) {
                harness.put(key, 1_000 + key);
            }
            handle = harness.checkpoint(3);
        }
        fixture.assertRestores(
                stateBackend,
                handle,
                300,
                key -> {
                    if (key % 6 == 0) {
                        return 1_000L + key;
                    }
                    if (key % 3 == 0) {
                        return null;
                    }
                    return key % 3 == 1 ? 1L - key : (long) key;
                });
    }

    /**
     * Between two checkpoints far more writes than the change buffer holds (1 mb): it keeps the
     * latest write of each entry in place, and the checkpoint is still exact and one record each.
     */
    @Test
    void moreWritesBetweenCheckpointsThanTheChangeBufferHolds() throws Exception {
        org.apache.flink.configuration.Configuration config =
                new org.apache.flink.configuration.Configuration();
        config.setString(AppendLogOptions.CHANGE_BUFFER_SIZE.key(), "1mb");
        AppendLogStateBackend stateBackend = fixture.backend(config);
        IncrementalRemoteKeyedStateHandle handle;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            // 600 000 writes of about 14 bytes each: over 8 mb for 20 000 entries.
            for (int round = 0; round < 30; round++) {
                for (int key = 0; key < 20_000; key++) {
                    harness.put(key, (long) key * 100 + round);
                }
            }
            handle = harness.checkpoint(1);
        }
        assertThat(handle.getCheckpointedSize()).isLessThan(20_000L * 30);
        fixture.assertRestores(stateBackend, handle, 20_000, key -> (long) key * 100 + 29);
    }

    /**
     * The index counts compressed batches by their raw length, as it counts records: the same
     * whether it learned of the batch by writing it or by restoring it, and more than the
     * compressed bytes, so that the dirty ratio compaction goes by is the same either way.
     */
    @Test
    void theIndexCountsCompressedBatchesUncompressedAlsoAfterARestore() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        IncrementalRemoteKeyedStateHandle handle;
        long written;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            for (int key = 0; key < 20_000; key++) {
                harness.put(key, key);
            }
            handle = harness.checkpoint(1);
            harness.backend.index().awaitUpdates();
            written = harness.backend.index().totalBytes();
        }
        long stored = fixture.segmentBytes() - BatchFormat.SEGMENT_HEADER_BYTES;
        assertThat(written).as("index bytes of the written batch").isGreaterThan(stored * 5 / 4);
        try (BackendHarness restored = fixture.restore(stateBackend, handle)) {
            assertThat(restored.backend.index().totalBytes())
                    .as("index bytes of the restored batch")
                    .isEqualTo(written);
        }
    }

    @Test
    void aRestoreReadsOnlyTheKeyGroupsItOwns() throws Exception {
        // Stored raw, every entry takes the same bytes: a quarter of them is a quarter of those.
        Configuration config = new Configuration();
        config.set(AppendLogOptions.COMPRESSION, BatchCompression.NONE);
        AppendLogStateBackend stateBackend = fixture.backend(config);
        IncrementalRemoteKeyedStateHandle handle;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            for (int key = 0; key < 20_000; key++) {
                harness.put(key, key);
            }
            handle = harness.checkpoint(1);
        }
        AppendLogKeyedStateBackend<Integer> all =
                BackendHarness.build(stateBackend, Collections.singletonList(handle));
        AppendLogKeyedStateBackend<Integer> quarter =
                BackendHarness.build(
                        stateBackend,
                        Collections.singletonList(handle),
                        org.apache.flink.runtime.state.KeyGroupRange.of(32, 63));
        try {
            long share = quarter.numKeyValueStateEntries();
            assertThat(all.numKeyValueStateEntries()).isEqualTo(20_000);
            assertThat(quarter.restoredBytes())
                    .isEqualTo(all.restoredBytes() * share / 20_000);
        } finally {
            all.dispose();
            quarter.dispose();
        }
    }
}
