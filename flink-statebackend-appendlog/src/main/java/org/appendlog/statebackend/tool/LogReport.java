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

package org.appendlog.statebackend.tool;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * What {@link LogTool} found at a path: the segments, the batches in them, the problems (each with
 * file and offset) and the totals. The command line renders it as text or as one JSON document.
 */
public final class LogReport {

    /** A segment file that was read (given a {@code _metadata}: one its handles refer to). */
    public static final class Segment {
        public final String file;
        public final long bytes;

        Segment(String file, long bytes) {
            this.file = file;
            this.bytes = bytes;
        }
    }

    /** A batch whose header, footer and key groups could be read (its record count may still be a problem). */
    public static final class Batch {
        public final String file;
        public final long offset;
        public final long length;
        public final long checkpointId;
        /** The oldest record's checkpoint id; below {@link #checkpointId} for compacted runs. */
        public final long minCheckpointId;
        public final int firstKeyGroup;
        public final int lastKeyGroup;
        public final long records;
        public final List<String> states;

        Batch(String file, long offset, long length, long checkpointId, long minCheckpointId,
                int firstKeyGroup, int lastKeyGroup, long records, List<String> states) {
            this.file = file;
            this.offset = offset;
            this.length = length;
            this.checkpointId = checkpointId;
            this.minCheckpointId = minCheckpointId;
            this.firstKeyGroup = firstKeyGroup;
            this.lastKeyGroup = lastKeyGroup;
            this.records = records;
            this.states = List.copyOf(states);
        }

        /** The line {@code inspect} prints. */
        public String describe() {
            return String.format(
                    "batch at offset %d: %d bytes, checkpoint %d (records from %d), key groups %d-%d, %d records, states %s",
                    offset, length, checkpointId, minCheckpointId, firstKeyGroup, lastKeyGroup, records, states);
        }
    }

    /** Damage or an inconsistency, at a byte offset of a file. */
    public static final class Problem {
        public final String file;
        public final long offset;
        public final String message;

        Problem(String file, long offset, String message) {
            this.file = file;
            this.offset = offset;
            this.message = message;
        }
    }

    private final List<Segment> segments = new ArrayList<>();
    private final List<Batch> batches = new ArrayList<>();
    private final List<Problem> problems = new ArrayList<>();
    /** The checkpoint id of the {@code _metadata} read, or -1 if the path was a segment or directory. */
    long checkpointId = -1;
    long totalBytes;
    /** The batches' bytes with their records uncompressed, which live record bytes compare to. */
    long uncompressedBytes;
    long liveEntries;
    long liveRecordBytes;

    void add(Segment segment) {
        segments.add(segment);
    }

    void add(Batch batch) {
        batches.add(batch);
    }

    void add(Problem problem) {
        problems.add(problem);
    }

    public List<Segment> segments() {
        return Collections.unmodifiableList(segments);
    }

    public List<Batch> batches() {
        return Collections.unmodifiableList(batches);
    }

    public List<Problem> problems() {
        return Collections.unmodifiableList(problems);
    }

    public long checkpointId() {
        return checkpointId;
    }

    public long totalBytes() {
        return totalBytes;
    }

    public long uncompressedBytes() {
        return uncompressedBytes;
    }

    public long liveEntries() {
        return liveEntries;
    }

    public long liveRecordBytes() {
        return liveRecordBytes;
    }

    /** Live record bytes over uncompressed bytes: how much of the log compaction would keep. */
    public double liveRatio() {
        return uncompressedBytes == 0 ? 0 : (double) liveRecordBytes / uncompressedBytes;
    }
}
