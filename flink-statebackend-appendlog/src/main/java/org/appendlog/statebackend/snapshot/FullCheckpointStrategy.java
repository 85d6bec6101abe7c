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
import org.appendlog.statebackend.log.SegmentedLog;

import org.apache.flink.runtime.state.KeyGroupRange;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Writes a full checkpoint: every live entry of the captured tables appended to the log as one
 * batch, written as a stream, which refers to no earlier one. A checkpoint is full after a
 * restore of another format, when its changes would outweigh the state, or when changes were
 * lost ({@link AppendLogSnapshotStrategy} decides at the barrier).
 */
final class FullCheckpointStrategy {

    private static final Logger LOG = LoggerFactory.getLogger(FullCheckpointStrategy.class);

    private final KeyGroupRange keyGroupRange;
    private final SegmentedLog log;
    private final CheckpointLineage lineage;
    private final AtomicLong fullBatches = new AtomicLong();

    FullCheckpointStrategy(KeyGroupRange keyGroupRange, SegmentedLog log, CheckpointLineage lineage) {
        this.keyGroupRange = keyGroupRange;
        this.log = log;
        this.lineage = lineage;
    }

    /** Appends the full batch that {@code listing} (a full one) lists alone. Under the write lock. */
    SnapshotBatches write(AppendLogSnapshotResources captured, CheckpointListing listing)
            throws IOException {
        long start = System.nanoTime();
        FullBatch all = new FullBatch(captured, keyGroupRange, log.compression());
        BatchLocation location = log.append(all, listing.confirmed);
        lineage.remember(captured.checkpointId, List.of(location), -1, true, null, null, location);
        fullBatches.incrementAndGet();
        LOG.debug(
                "Checkpoint {} appended all {} live records ({} bytes) to state log segment {} at"
                        + " offset {} in {} ms",
                captured.checkpointId,
                all.recordCount(),
                location.length(),
                location.segment(),
                location.offset(),
                (System.nanoTime() - start) / 1_000_000);
        return new SnapshotBatches(
                List.of(location), listing.placeholders, List.of(), location.length());
    }

    /** Full batches appended so far. */
    long fullBatches() {
        return fullBatches.get();
    }
}
