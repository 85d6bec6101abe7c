package org.appendlog.cec.log;

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * The persisted output stream of one CEC operator: a directory with one sub-directory per subtask
 * ({@code subtask-0000}, ...). Each holds segment files, their time indexes and commit markers
 * ({@code commit-<n>}, numbered in the order they are written). A commit marker names the end of the stream as of a completed
 * Flink checkpoint; readers see exactly the chain of segment extents that ends there
 * (read-committed), never a tail that a failed attempt wrote after its last checkpoint.
 */
public final class PersistedStream {

    private static final Logger LOG = LoggerFactory.getLogger(PersistedStream.class);
    private static final String SUBTASK_PREFIX = "subtask-";
    private static final String COMMIT_PREFIX = "commit-";
    private static final int COMMITS_KEPT = 3;

    private PersistedStream() {}

    public static Path subtaskDirectory(Path root, int subtask) {
        return new Path(root, String.format("%s%04d", SUBTASK_PREFIX, subtask));
    }

    /** The subtask directories of the stream at {@code root}, in subtask order. */
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
        List<Path> earlier = commitMarkers(fs, directory);
        long sequence =
                earlier.isEmpty()
                        ? 1
                        : Math.addExact(numberOf(earlier.get(earlier.size() - 1)), 1);
        String name = String.format("%s%020d", COMMIT_PREFIX, sequence);
        Path tmp = new Path(directory, "." + name + ".inprogress");
        try (FSDataOutputStream raw = fs.create(tmp, FileSystem.WriteMode.OVERWRITE);
                DataOutputStream out = new DataOutputStream(raw)) {
            marker.write(out);
            out.flush();
            raw.sync();
        }
        // A new number: no marker has the name yet.
        Path target = new Path(directory, name);
        if (!fs.rename(tmp, target)) {
            throw new IOException("Could not rename CEC commit marker " + tmp + " to " + target);
        }
        // The new marker is the last; of the earlier ones, COMMITS_KEPT - 1 stay.
        for (int i = 0; i < earlier.size() - (COMMITS_KEPT - 1); i++) {
            fs.delete(earlier.get(i), false);
        }
        LOG.debug("Committed CEC stream {}: {}", directory, marker);
    }

    private static long numberOf(Path commitMarker) throws IOException {
        String name = commitMarker.getName();
        try {
            return Long.parseLong(name.substring(COMMIT_PREFIX.length()));
        } catch (NumberFormatException e) {
            throw new IOException("Not a CEC commit marker: " + commitMarker, e);
        }
    }

    private static List<Path> commitMarkers(FileSystem fs, Path directory) throws IOException {
        List<Path> commits = new ArrayList<>();
        for (FileStatus child : DirectoryReads.list(fs, directory).orElse(Collections.emptyList())) {
            if (child.getPath().getName().startsWith(COMMIT_PREFIX)) {
                commits.add(child.getPath());
            }
        }
        commits.sort((a, b) -> a.getName().compareTo(b.getName()));
        return commits;
    }

    /**
     * The subtask's latest commit marker, if it committed anything. Read again if the marker
     * listed as the latest is deleted before it is opened: newer ones were committed meanwhile.
     */
    public static Optional<CommitMarker> latestCommit(FileSystem fs, Path directory) throws IOException {
        return DirectoryReads.retried(
                directory,
                () -> {
                    List<Path> commits = commitMarkers(fs, directory);
                    if (commits.isEmpty()) {
                        return Optional.empty();
                    }
                    try (DataInputStream in = new DataInputStream(fs.open(commits.get(commits.size() - 1)))) {
                        return Optional.of(CommitMarker.read(in));
                    }
                });
    }

    /** The end of the subtask's stream as of its latest commit, if it committed anything. */
    public static Optional<LogPosition> committedEnd(FileSystem fs, Path directory) throws IOException {
        return latestCommit(fs, directory).map(CommitMarker::end);
    }

    /** The segment extents that make up the stream ending at {@code end}, oldest first. */
    public static List<SegmentExtent> chainEndingAt(FileSystem fs, Path directory, LogPosition end)
            throws IOException {
        List<SegmentExtent> chain = new ArrayList<>();
        for (SegmentExtent extent = SegmentExtent.endingAt(fs, directory, end);
                extent != null;
                extent = extent.predecessor(fs, directory)) {
            chain.add(extent);
        }
        Collections.reverse(chain);
        return chain;
    }
}
