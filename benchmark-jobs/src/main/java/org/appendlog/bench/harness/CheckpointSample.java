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

package org.appendlog.bench.harness;

import org.apache.flink.runtime.checkpoint.AbstractCheckpointStats;
import org.apache.flink.runtime.checkpoint.TaskStateStats;

/**
 * One completed checkpoint's figures, as Flink's statistics give them: which checkpoint, when it
 * was triggered (ms after the measured part of the run began), its end-to-end duration, and for
 * each part of a subtask's checkpoint the longest any subtask took (that subtask decided how long
 * the checkpoint lasted), and the bytes it uploaded and stands for. A slow checkpoint's parts say
 * where its time went: the barrier's way to the task (start delay, alignment), the task's pause
 * (sync) or the upload (async).
 */
public final class CheckpointSample {

    static final String CSV_COLUMNS =
            "checkpoint_id,triggered_ms,duration_ms,sync_ms,async_ms,start_delay_ms,alignment_ms,"
                    + "incremental_bytes,full_bytes";

    public final long id;
    public final long triggeredMs;
    public final long durationMs;
    public final long syncMs;
    public final long asyncMs;
    public final long startDelayMs;
    public final long alignmentMs;
    public final long incrementalBytes;
    public final long fullBytes;

    /** The figures of a completed checkpoint; {@code fromMillis} is when the measured part began. */
    CheckpointSample(AbstractCheckpointStats checkpoint, long fromMillis) {
        long sync = 0;
        long async = 0;
        long startDelay = 0;
        long alignment = 0;
        for (TaskStateStats task : checkpoint.getAllTaskStateStats()) {
            TaskStateStats.TaskStateStatsSummary summary = task.getSummaryStats();
            sync = Math.max(sync, summary.getSyncCheckpointDurationStats().getMaximum());
            async = Math.max(async, summary.getAsyncCheckpointDurationStats().getMaximum());
            startDelay = Math.max(startDelay, summary.getCheckpointStartDelayStats().getMaximum());
            alignment = Math.max(alignment, summary.getAlignmentDurationStats().getMaximum());
        }
        this.id = checkpoint.getCheckpointId();
        this.triggeredMs = checkpoint.getTriggerTimestamp() - fromMillis;
        this.durationMs = checkpoint.getEndToEndDuration();
        this.syncMs = sync;
        this.asyncMs = async;
        this.startDelayMs = startDelay;
        this.alignmentMs = alignment;
        this.incrementalBytes = checkpoint.getCheckpointedSize();
        this.fullBytes = checkpoint.getStateSize();
    }

    /** The figures as {@link #CSV_COLUMNS}. */
    String csv() {
        return id + "," + triggeredMs + "," + durationMs + "," + syncMs + "," + asyncMs + ","
                + startDelayMs + "," + alignmentMs + "," + incrementalBytes + "," + fullBytes;
    }
}
