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

package org.appendlog.cec.log;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.util.Optional;

/**
 * Where a subtask's stream starts once {@link LogRetention} deleted its oldest segments (Kafka's
 * log start offset): the first segment kept, and the earliest timestamp from which the stream is
 * complete. A chain walked back from a commit stops at that segment instead of following its
 * back link to a deleted one. Written before the segments behind it are deleted, so a deletion
 * cut short by a crash leaves a stream that reads from this start.
 */
public final class LogStart {

    static final String PREFIX = "start-";

    private final String segment;
    private final long earliestTimestamp;

    LogStart(String segment, long earliestTimestamp) {
        this.segment = segment;
        this.earliestTimestamp = earliestTimestamp;
    }

    /** The subtask's current start, if retention ever deleted anything there. */
    public static Optional<LogStart> read(FileSystem fs, Path directory) throws IOException {
        return NumberedMarkers.readLatest(fs, directory, PREFIX, LogStart::read);
    }

    void write(FileSystem fs, Path directory) throws IOException {
        NumberedMarkers.writeNext(fs, directory, PREFIX, 1, this::write);
    }

    private void write(DataOutput out) throws IOException {
        out.writeUTF(segment);
        out.writeLong(earliestTimestamp);
    }

    private static LogStart read(DataInput in) throws IOException {
        return new LogStart(in.readUTF(), in.readLong());
    }

    /** File name of the first segment kept. */
    public String segment() {
        return segment;
    }

    /**
     * Every record with a timestamp at or after this one is still in the stream; older ones may
     * have been deleted.
     */
    public long earliestTimestamp() {
        return earliestTimestamp;
    }

    @Override
    public String toString() {
        return "stream start at " + segment + ", complete from t=" + earliestTimestamp;
    }
}
