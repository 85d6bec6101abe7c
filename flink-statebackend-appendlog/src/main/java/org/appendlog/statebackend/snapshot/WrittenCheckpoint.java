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
import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchLocation;

import javax.annotation.Nullable;

import java.util.List;

/**
 * A checkpoint whose asynchronous phase wrote it, not yet known to be complete: the batches it
 * refers to, and the batch it appended, which the index learns only once the checkpoint
 * completes. A batch may carry changes that a completed checkpoint holds as well (its barrier
 * came before that one's completion did); indexed earlier, it would make the completed
 * checkpoint's records look dead to compaction, and be gone with its checkpoint's abort.
 */
final class WrittenCheckpoint {

    final List<BatchLocation> batches;
    /**
     * The last checkpoint known complete when it listed its batches: the batch it appended
     * carries every change since that one's barrier.
     */
    final long builtOn;
    /** Whether it appended every live entry rather than the changes. */
    final boolean full;
    /** The pending compaction its batches apply, taken up by it or by an earlier checkpoint. */
    @Nullable final CompactionResult compaction;
    /**
     * The changes it appended, or null if it appended none (no changes) or every live entry
     * (written as a stream, read back from the log when the index learns it).
     */
    @Nullable final BatchBuilder appended;
    @Nullable final BatchLocation appendedAt;

    WrittenCheckpoint(
            List<BatchLocation> batches,
            long builtOn,
            boolean full,
            @Nullable CompactionResult compaction,
            @Nullable BatchBuilder appended,
            @Nullable BatchLocation appendedAt) {
        this.batches = batches;
        this.builtOn = builtOn;
        this.full = full;
        this.compaction = compaction;
        this.appended = appended;
        this.appendedAt = appendedAt;
    }
}
