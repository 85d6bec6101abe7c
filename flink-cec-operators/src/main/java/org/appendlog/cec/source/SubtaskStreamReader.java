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

package org.appendlog.cec.source;

import org.appendlog.cec.log.ForwardLogReader;
import org.appendlog.cec.log.LogPosition;
import org.appendlog.cec.log.LogRecord;
import org.appendlog.cec.log.LogStart;
import org.appendlog.cec.log.PersistedStream;
import org.appendlog.cec.log.SegmentExtent;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.Optional;
import java.util.concurrent.TimeUnit;

/**
 * A split reader's place in one subtask stream: returns its committed records in order. A split
 * with a committed end is read up to it; a following split reads up to the latest commit and
 * {@link #refresh()} extends it to later ones. After a restore of the writing job the stream
 * continues in a new segment that links back to the restored checkpoint, which is at or after
 * every commit before it, so what a failed attempt wrote after its last commit is never read.
 */
final class SubtaskStreamReader implements Closeable {

    private final CecLogSplit split;
    private final Path directory;
    @Nullable private FileSystem fs;
    @Nullable private ForwardLogReader reader;
    @Nullable private LogPosition knownEnd;
    /** When the commit marker was last read ({@link System#nanoTime()}: a clock step must not stall it). */
    private long lastRefreshNanos;
    private boolean refreshed;

    SubtaskStreamReader(CecLogSplit split) {
        this.split = split;
        this.directory = new Path(split.directory());
    }

    boolean follows() {
        return split.committedEnd() == null;
    }

    /** The next record of what is committed, or null if there is none (for now, when following). */
    @Nullable
    LogRecord next() throws IOException {
        if (reader == null && split.committedEnd() != null) {
            open(split.committedEnd());
        }
        return reader == null ? null : reader.next();
    }

    /** Where the record after the one {@link #next()} returned starts. */
    LogPosition position() {
        return reader.position();
    }

    /** Committed bytes not yet returned, up to the latest commit seen. */
    long lagBytes() {
        return reader == null ? 0 : reader.bytesBehind();
    }

    /**
     * Reads the latest commit marker again if it was last read {@code millis} ago or more (or
     * never); true if the stream was committed further.
     */
    boolean refreshEvery(long millis) throws IOException {
        long now = System.nanoTime();
        if (refreshed && now - lastRefreshNanos < TimeUnit.MILLISECONDS.toNanos(millis)) {
            return false;
        }
        refreshed = true;
        lastRefreshNanos = now;
        return refresh();
    }

    /** Reads the latest commit marker again; true if the stream was committed further. */
    private boolean refresh() throws IOException {
        Optional<LogPosition> end = PersistedStream.committedEnd(fs(), directory);
        if (end.isEmpty() && knownEnd != null) {
            throw new IOException(
                    "The persisted stream in " + directory + " was withdrawn after this reader read it up to "
                            + knownEnd + ": the writing job was restored from a checkpoint older than this stream's "
                            + "generation (a restore at another parallelism that a later restore abandoned).");
        }
        if (end.isEmpty() || end.get().equals(knownEnd)) {
            return false;
        }
        if (reader == null) {
            open(end.get());
        } else {
            List<SegmentExtent> continuation = PersistedStream.chainFrom(fs, directory, knownEnd, end.get());
            if (continuation.isEmpty()) {
                throw lostPlace(knownEnd, end.get());
            }
            reader.extend(continuation);
            knownEnd = end.get();
        }
        return true;
    }

    private FileSystem fs() throws IOException {
        if (fs == null) {
            fs = directory.getFileSystem();
        }
        return fs;
    }

    private void open(LogPosition end) throws IOException {
        FileSystem fs = fs();
        LogPosition resumeAt = split.resumeAt();
        List<SegmentExtent> chain;
        if (resumeAt == null) {
            chain = PersistedStream.chainEndingAt(fs, directory, end);
            checkRetained(chain.get(0));
        } else {
            chain = PersistedStream.chainFrom(fs, directory, resumeAt, end);
            if (chain.isEmpty()) {
                throw lostPlace(resumeAt, end);
            }
        }
        reader = new ForwardLogReader(fs, chain, split.fromTimestamp(), resumeAt);
        knownEnd = end;
    }

    /** Fails if retention deleted records at or after the split's start timestamp. */
    private void checkRetained(SegmentExtent first) throws IOException {
        Optional<LogStart> start = LogStart.read(fs, directory);
        if (start.isPresent()
                && start.get().segment().equals(first.path().getName())
                && split.fromTimestamp() < start.get().earliestTimestamp()) {
            throw new IOException(
                    "CecLogSource cannot read " + directory + " from t=" + split.fromTimestamp() + ": log retention "
                            + "(cec.log.retention.time, cec.log.retention.size) deleted its older records; the earliest "
                            + "timestamp still available there is " + start.get().earliestTimestamp() + ".");
        }
    }

    private IOException lostPlace(LogPosition position, LogPosition end) throws IOException {
        Optional<LogStart> start = LogStart.read(fs, directory);
        if (!fs.exists(new Path(directory, position.segment())) && start.isPresent()) {
            return new IOException(
                    "CecLogSource fell behind log retention in " + directory + ": segment " + position.segment()
                            + " was deleted before it was read; the earliest timestamp still available there is "
                            + start.get().earliestTimestamp() + ".");
        }
        return new IOException(
                "The persisted stream in " + directory + " no longer continues from " + position + ", where this "
                        + "reader is: its latest commit " + end + " is on a chain that does not pass there (the "
                        + "writing job was restored from an older savepoint or started again without state).");
    }

    @Override
    public void close() throws IOException {
        if (reader != null) {
            reader.close();
        }
    }
}
