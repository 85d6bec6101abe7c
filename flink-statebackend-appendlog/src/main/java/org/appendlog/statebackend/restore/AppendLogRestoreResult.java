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

package org.appendlog.statebackend.restore;

import org.appendlog.statebackend.log.BatchLocation;

import java.util.List;

/** What an {@link AppendLogRestoreOperation} restored, and what the first checkpoint builds on. */
public final class AppendLogRestoreResult {

    private final List<BatchLocation> batches;
    private final boolean needsFullCheckpoint;
    private final long bytesRead;
    private final long indexMillis;
    private final int localSegments;

    AppendLogRestoreResult(
            List<BatchLocation> batches,
            boolean needsFullCheckpoint,
            long bytesRead,
            long indexMillis,
            int localSegments) {
        this.batches = batches;
        this.needsFullCheckpoint = needsFullCheckpoint;
        this.bytesRead = bytesRead;
        this.indexMillis = indexMillis;
        this.localSegments = localSegments;
    }

    /** The batches that later checkpoints build on. */
    public List<BatchLocation> batches() {
        return batches;
    }

    /** Whether checkpoints are full until one of them completes. */
    public boolean needsFullCheckpoint() {
        return needsFullCheckpoint;
    }

    /** Record bytes read from the log. */
    public long bytesRead() {
        return bytesRead;
    }

    /** Milliseconds the restore threads spent rebuilding the index, summed over them. */
    public long indexMillis() {
        return indexMillis;
    }

    /** Segments read from their task-local copies instead of the remote log. */
    public int localSegments() {
        return localSegments;
    }
}
