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

import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.SegmentedLog;

import org.apache.flink.runtime.state.KeyGroupRange;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.List;

/**
 * Writes an incremental checkpoint: one batch carrying the captures its listing claimed,
 * deduplicated, appended to the log after the batches the listing refers to, as Flink's RocksDB
 * backend uploads only the files its last completed checkpoint lacks. Which batches those are,
 * and which of their segments the handle lists as placeholders, the {@link CheckpointLineage}
 * decides.
 */
final class IncrementalCheckpointStrategy {

    private static final Logger LOG = LoggerFactory.getLogger(IncrementalCheckpointStrategy.class);

    private final KeyGroupRange keyGroupRange;
    private final SegmentedLog log;
    private final CheckpointLineage lineage;

    /**
     * Per key group, the bytes of the last batch a checkpoint appended: the next batch's buffers
     * start at that size. Guarded by the write lock.
     */
    private int[] lastBatchBytes;

    IncrementalCheckpointStrategy(
            KeyGroupRange keyGroupRange, SegmentedLog log, CheckpointLineage lineage) {
        this.keyGroupRange = keyGroupRange;
        this.log = log;
        this.lineage = lineage;
    }

    /**
     * Appends one batch carrying the listing's captures, deduplicated, and adds it to the
     * listing's batches; none if they changed nothing. Under the write lock.
     */
    SnapshotBatches write(AppendLogSnapshotResources captured, CheckpointListing listing)
            throws IOException {
        BatchLocation location = appendChanges(captured, listing);
        return new SnapshotBatches(
                listing.batches,
                listing.placeholders,
                List.of(),
                location == null ? 0 : location.length());
    }

    @Nullable
    private BatchLocation appendChanges(
            AppendLogSnapshotResources captured, CheckpointListing listing) throws IOException {
        long checkpointId = captured.checkpointId;
        long start = System.nanoTime();
        for (Capture c : listing.captures) {
            materialize(c);
        }
        BatchBuilder batch = merge(checkpointId, captured.stateNames, listing.captures);
        BatchLocation location = null;
        long materialized = System.nanoTime();
        if (batch.recordCount() > 0) {
            // an empty batch (an idle interval) says nothing about the next one
            lastBatchBytes = batch.keyGroupBytes();
            location = log.append(batch, listing.confirmed);
            listing.batches.add(location);
            LOG.debug(
                    "Checkpoint {} appended {} records ({} bytes) to state log segment {} at offset {}: changes deduplicated in {} ms, written and synced in {} ms",
                    checkpointId,
                    batch.recordCount(),
                    location.length(),
                    location.segment(),
                    location.offset(),
                    (materialized - start) / 1_000_000,
                    (System.nanoTime() - materialized) / 1_000_000);
        }
        lineage.remember(
                checkpointId,
                listing.batches,
                listing.builtOn,
                false,
                listing.compaction,
                batch,
                location);
        return location;
    }

    /**
     * Builds a capture's records. Should its logged changes turn out lost, this checkpoint fails,
     * and the next appends every live entry.
     */
    private void materialize(Capture capture) throws IOException {
        try {
            capture.materialize(lastBatchBytes);
        } catch (IOException e) {
            if (capture.lostChanges()) {
                lineage.requireFullCheckpoint();
            }
            throw e;
        }
    }

    private BatchBuilder merge(long checkpointId, List<String> names, List<Capture> captures)
            throws IOException {
        if (captures.size() == 1) {
            return captures.get(0).records();
        }
        BatchBuilder batch = new BatchBuilder(checkpointId, keyGroupRange, names, lastBatchBytes);
        for (Capture capture : captures) {
            batch.appendAll(capture.records());
        }
        return batch;
    }
}
