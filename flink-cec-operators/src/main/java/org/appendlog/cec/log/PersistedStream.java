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

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * The persisted output stream of one CEC operator: a directory with one sub-directory per subtask
 * stream ({@code subtask-0000}, ...). Each holds segment files, their time indexes and commit markers
 * ({@code commit-<n>}, numbered in the order they are written). A commit marker names the end of the stream as of a completed
 * Flink checkpoint; readers see exactly the chain of segment extents that ends there
 * (read-committed), never a tail that a failed attempt wrote after its last checkpoint.
 *
 * <p>A restore at another parallelism starts a new generation of subtask streams, named after the
 * checkpoint it restored ({@code subtask-0000-gen-<checkpoint id>}, ...); the first generation's
 * names carry no suffix. Streams of earlier generations are never appended to again.
 */
public final class PersistedStream {

    private static final Logger LOG = LoggerFactory.getLogger(PersistedStream.class);
    private static final String SUBTASK_PREFIX = "subtask-";
    private static final String GENERATION_INFIX = "-gen-";
    private static final String COMMIT_PREFIX = "commit-";
    private static final int COMMITS_KEPT = 3;

    private PersistedStream() {}

    /** The directory of subtask {@code subtask}'s stream in the first generation. */
    public static Path subtaskDirectory(Path root, int subtask) {
        return subtaskDirectory(root, 0, subtask);
    }

    /** The directory of subtask {@code subtask}'s stream in generation {@code generation}. */
    public static Path subtaskDirectory(Path root, long generation, int subtask) {
        String name = String.format("%s%04d", SUBTASK_PREFIX, subtask);
        return new Path(root, generation == 0 ? name : name + GENERATION_INFIX + generation);
    }

    /** The generation of a subtask stream's directory: 0 for the first, else the checkpoint id that started it. */
    public static long generationOf(Path directory) throws IOException {
        String name = directory.getName();
        int infix = name.indexOf(GENERATION_INFIX);
        return infix < 0 ? 0 : parseNumber(directory, name.substring(infix + GENERATION_INFIX.length()));
    }

    /** The subtask index of a subtask stream's directory. */
    public static int subtaskOf(Path directory) throws IOException {
        String name = directory.getName();
        int infix = name.indexOf(GENERATION_INFIX);
        return Math.toIntExact(
                parseNumber(directory, name.substring(SUBTASK_PREFIX.length(), infix < 0 ? name.length() : infix)));
    }

    private static long parseNumber(Path directory, String digits) throws IOException {
        try {
            return Long.parseLong(digits);
        } catch (NumberFormatException e) {
            throw new IOException("Not a CEC subtask stream directory: " + directory, e);
        }
    }

    /** The subtask stream directories at {@code root}, of every generation, in name order. */
    public static List<Path> subtaskDirectories(FileSystem fs, Path root) throws IOException {
        List<Path> result = new ArrayList<>();
        List<FileStatus> children =
                DirectoryReads.list(fs, root)
                        .orElseThrow(() -> new IOException("No persisted CEC stream at " + root + " (directory missing)"));
        for (FileStatus child : children) {
            if (child.isDir() && child.getPath().getName().startsWith(SUBTASK_PREFIX)) {
                result.add(child.getPath());
            }
        }
        result.sort((a, b) -> a.getName().compareTo(b.getName()));
        return result;
    }

    /**
     * Records the marker's position as the committed end of the subtask's stream. Written to a
     * temporary file and renamed, so a reader never sees a torn marker. Markers are numbered in
     * the order they are committed, not by checkpoint id: a job restored from an older savepoint,
     * or started again without state, commits lower checkpoint ids than the run it replaces.
     */
    public static void commit(FileSystem fs, Path directory, CommitMarker marker) throws IOException {
        NumberedMarkers.writeNext(fs, directory, COMMIT_PREFIX, COMMITS_KEPT, marker::write);
        LOG.debug("Committed CEC stream {}: {}", directory, marker);
    }

    /**
     * Deletes every commit marker of the subtask stream, so that readers no longer see any of it: a
     * restore from a checkpoint the stream does not descend from abandoned it. Its segments stay.
     */
    public static void withdraw(FileSystem fs, Path directory) throws IOException {
        List<Path> commits = NumberedMarkers.list(fs, directory, COMMIT_PREFIX);
        if (commits.isEmpty()) {
            return;
        }
        for (Path commit : commits) {
            fs.delete(commit, false);
        }
        LOG.info("Withdrew CEC stream {}: deleted its commit markers {}", directory, commits);
    }

    /**
     * The subtask's latest commit marker, if it committed anything. Read again if the marker
     * listed as the latest is deleted before it is opened: newer ones were committed meanwhile.
     */
    public static Optional<CommitMarker> latestCommit(FileSystem fs, Path directory) throws IOException {
        return NumberedMarkers.readLatest(fs, directory, COMMIT_PREFIX, CommitMarker::read);
    }

    /** The end of the subtask's stream as of its latest commit, if it committed anything. */
    public static Optional<LogPosition> committedEnd(FileSystem fs, Path directory) throws IOException {
        return latestCommit(fs, directory).map(CommitMarker::end);
    }

    /**
     * The segment extents that make up the stream ending at {@code end}, oldest first: back to
     * the stream's first segment, or to the {@link LogStart} where retention made it start.
     */
    public static List<SegmentExtent> chainEndingAt(FileSystem fs, Path directory, LogPosition end)
            throws IOException {
        return walkBack(fs, directory, end, null);
    }

    /**
     * The extents of the stream ending at {@code end} from the segment that {@code from} names,
     * oldest first, reading only the headers of those segments; empty if that segment is not on
     * the stream (which then continues from an earlier position: a restore from an older
     * savepoint, or a new chain).
     */
    public static List<SegmentExtent> chainFrom(FileSystem fs, Path directory, LogPosition from, LogPosition end)
            throws IOException {
        List<SegmentExtent> chain = walkBack(fs, directory, end, from.segment());
        return chain.get(0).path().getName().equals(from.segment()) ? chain : Collections.emptyList();
    }

    private static List<SegmentExtent> walkBack(
            FileSystem fs, Path directory, LogPosition end, @Nullable String stopAt) throws IOException {
        LogStart start = LogStart.read(fs, directory).orElse(null);
        List<SegmentExtent> chain = new ArrayList<>();
        for (SegmentExtent extent = SegmentExtent.endingAt(fs, directory, end);
                extent != null;
                extent = extent.path().getName().equals(stopAt) ? null : extent.predecessor(fs, directory, start)) {
            chain.add(extent);
        }
        Collections.reverse(chain);
        return chain;
    }
}
