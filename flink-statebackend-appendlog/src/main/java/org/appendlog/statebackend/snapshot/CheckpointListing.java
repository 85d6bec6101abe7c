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

/**
 * What a checkpoint's asynchronous phase lists and writes, as the {@link CheckpointLineage}
 * decides: the batches it refers to before its own, the segments of those registered with the
 * JobManager, those it lists as placeholders, and, if incremental, the compaction it applies and
 * the captures its batch carries.
 */
final class CheckpointListing {

    final List<BatchLocation> batches;
    /** Segments that the last completed checkpoint refers to: registered with the JobManager. */
    final Set<String> confirmed;
    /**
     * Segments listed as placeholders: the confirmed ones, a compaction run that an earlier
     * checkpoint took up, or the segments of the pending log it lists.
     */
    final Set<String> placeholders;
    @Nullable final CompactionResult compaction;
    /**
     * The checkpoint whose log it writes on, known complete or full: its batch carries every
     * change since that one's barrier.
     */
    final long builtOn;
    final List<Capture> captures;
    /** Whether it appends every live entry instead of the captures. */
    final boolean full;

    CheckpointListing(
            List<BatchLocation> batches,
            Set<String> confirmed,
            Set<String> placeholders,
            @Nullable CompactionResult compaction,
            long builtOn,
            List<Capture> captures,
            boolean full) {
        this.batches = batches;
        this.confirmed = confirmed;
        this.placeholders = placeholders;
        this.compaction = compaction;
        this.builtOn = builtOn;
        this.captures = captures;
        this.full = full;
    }
}
