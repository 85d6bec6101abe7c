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

package org.appendlog.statebackend.metrics;

/**
 * The names of the metrics the backend registers, all under the group {@link #GROUP} of the
 * operator's metric group. The backend, the benchmark harness and the tests read them from here.
 * Cumulative figures (bytes appended, passes, ...) are counters; the others are gauges.
 */
public final class AppendLogMetrics {

    /** The group under the operator's metric group that holds the metrics below. */
    public static final String GROUP = "appendlog";

    /** Bytes of the live records (each live entry's latest) in the batches checkpoints refer to. */
    public static final String LIVE_BYTES = "liveBytes";

    /** Bytes of the batches the backend's checkpoints refer to, records uncompressed. */
    public static final String TOTAL_BYTES = "totalBytes";

    /** Dead bytes over total bytes of the segments the backend's checkpoints refer to. */
    public static final String DIRTY_RATIO = "dirtyRatio";

    /** Entries whose latest record is a value. */
    public static final String LIVE_ENTRIES = "liveEntries";

    /** Bytes this backend wrote to the log's segments (counter). */
    public static final String BYTES_APPENDED = "bytesAppended";

    /** Marked entries plus logged writes since the last checkpoint. */
    public static final String DIRTY_ENTRIES = "dirtyEntries";

    /** Bytes of the log read by the restore. */
    public static final String RESTORE_BYTES_READ = "restoreBytesRead";

    /**
     * Milliseconds the restore spent rebuilding the index (reading the log and filling the heap
     * left out), summed over its threads.
     */
    public static final String RESTORE_INDEX_MILLIS = "restoreIndexMillis";

    /** Segments the restore read from their task-local copies (Flink's local recovery). */
    public static final String RESTORE_LOCAL_SEGMENTS = "restoreLocalSegments";

    /** Checkpoints that appended every live entry (counter). */
    public static final String FULL_BATCHES = "fullBatches";

    /**
     * Intervals whose writes went untracked because the state was expected to turn over
     * (counter).
     */
    public static final String UNTRACKED_INTERVALS = "untrackedIntervals";

    /** Compaction passes that finished (counter). */
    public static final String COMPACTIONS_RUN = "compactionsRun";

    /** Log bytes that compaction passes read (counter). */
    public static final String COMPACTION_BYTES_READ = "compactionBytesRead";

    /** Bytes of the runs that compaction passes wrote (counter). */
    public static final String COMPACTION_BYTES_WRITTEN = "compactionBytesWritten";

    /** Duration of the last compaction pass that found segments to compact, in milliseconds. */
    public static final String LAST_COMPACTION_DURATION_MS = "lastCompactionDurationMs";

    /** Compaction passes that failed with an error (counter); the next pass starts over. */
    public static final String COMPACTIONS_FAILED = "compactionsFailed";

    /**
     * 1 while compaction is stopped because the index missed an update after an error (it resumes
     * once the full checkpoint that the backend then takes has completed), else 0.
     */
    public static final String COMPACTION_STOPPED = "compactionStopped";

    /** Bytes of the heap that the index's tables and key bytes take. */
    public static final String INDEX_HEAP_BYTES = "indexHeapBytes";

    /** Serialized writes buffered since the last checkpoint, in bytes. */
    public static final String CHANGE_BUFFER_BYTES = "changeBufferBytes";

    /**
     * Bytes of the heap that the change buffer holds: its pooled chunks and the tables that
     * deduplicate the current interval's writes.
     */
    public static final String CHANGE_BUFFER_HEAP_BYTES = "changeBufferHeapBytes";

    /** Segments that the last completed checkpoint refers to. */
    public static final String SEGMENT_COUNT = "segmentCount";

    private AppendLogMetrics() {}
}
