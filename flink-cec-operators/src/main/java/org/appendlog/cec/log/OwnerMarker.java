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

import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.EOFException;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Names the CEC operator that writes a subtask directory: a file {@code owner-<operator id>}
 * holding the operator's name. Two operators configured with one log path would commit over each
 * other; {@link #claim} lets them find out.
 */
public final class OwnerMarker {

    private static final Logger LOG = LoggerFactory.getLogger(OwnerMarker.class);

    private static final String PREFIX = "owner-";
    /** Reads of a marker found empty before its name counts as unknown. */
    private static final int EMPTY_MARKER_READS = 50;
    private static final long EMPTY_MARKER_PAUSE_MS = 10;

    private final String operatorId;
    private final String operatorName;

    public OwnerMarker(String operatorId, String operatorName) {
        this.operatorId = operatorId;
        this.operatorName = operatorName;
    }

    /**
     * Claims {@code directory}, a subtask stream directory of the stream at {@code root}: writes this
     * owner's marker into it unless it is there already (a restore or restart of the same
     * operator), then returns the owners whose markers are older, which own the directory; if
     * there are any, this owner's marker is removed again. Every owner writes before it looks, so
     * of two operators that start at the same time at most one goes on: a marker that the other
     * did not see yet is younger than the other's, and markers of the same age refuse each other
     * (both operators fail, and their restarts claim again). No atomic create-if-absent is needed,
     * which Flink's local file system does not offer. Younger markers are ignored with a warning:
     * a refused operator that died before removing its marker must not block the rightful owner.
     *
     * <p>A subtask directory that does not exist yet is created only if the owner of the first
     * subtask directory, which every operator on the path has, is this one or none: a refused
     * operator of higher parallelism than the owner leaves no directories behind.
     */
    public static List<OwnerMarker> claim(FileSystem fs, Path root, Path directory, OwnerMarker self)
            throws IOException {
        if (!fs.exists(directory)) {
            Optional<OwnerMarker> pathOwner = oldest(fs, PersistedStream.subtaskDirectory(root, 0));
            if (pathOwner.isPresent() && !pathOwner.get().operatorId.equals(self.operatorId)) {
                return Collections.singletonList(pathOwner.get());
            }
            fs.mkdirs(directory);
        }
        Path own = new Path(directory, PREFIX + self.operatorId);
        boolean written = !fs.exists(own);
        if (written) {
            write(fs, own, self);
        }
        List<OwnerMarker> older;
        try {
            older = olderOwners(fs, directory, fs.getFileStatus(own));
        } catch (IOException | RuntimeException e) {
            if (written) {
                fs.delete(own, false);
            }
            throw e;
        }
        if (!older.isEmpty()) {
            fs.delete(own, false);
        }
        return older;
    }

    private static List<OwnerMarker> olderOwners(FileSystem fs, Path directory, FileStatus own)
            throws IOException {
        List<OwnerMarker> older = new ArrayList<>();
        long ownAge = own.getModificationTime();
        for (FileStatus child : DirectoryReads.list(fs, directory).orElse(Collections.emptyList())) {
            if (!isMarker(child) || child.getPath().getName().equals(own.getPath().getName())) {
                continue;
            }
            // As listed: a local file's status reads the time anew, and the name written into a
            // marker found empty (see read) must not make it younger.
            long age = child.getModificationTime();
            OwnerMarker other = read(fs, child);
            if (other == null) {
                continue;
            }
            // A marker of the same age counts as older, from both sides: the clock of file times
            // is coarse, and of two markers that look alike neither may assume it came first.
            if (age <= ownAge) {
                older.add(other);
            } else {
                LOG.warn(
                        "Ignoring the marker {} of {}, written after this operator's: an operator"
                                + " refused this directory, or one that failed before removing it",
                        child.getPath(),
                        other);
            }
        }
        return older;
    }

    /** The owner of {@code directory}: its oldest marker, if it has any. */
    private static Optional<OwnerMarker> oldest(FileSystem fs, Path directory) throws IOException {
        FileStatus oldest = null;
        for (FileStatus child : DirectoryReads.list(fs, directory).orElse(Collections.emptyList())) {
            if (isMarker(child) && (oldest == null || precedes(child, oldest))) {
                oldest = child;
            }
        }
        return oldest == null ? Optional.empty() : Optional.ofNullable(read(fs, oldest));
    }

    private static boolean isMarker(FileStatus file) {
        return file.getPath().getName().startsWith(PREFIX);
    }

    /**
     * The marker in {@code file}, or null if it was removed meanwhile by an operator it refused. A
     * marker still being written counts; it is read again for up to {@link #EMPTY_MARKER_READS}
     * times {@link #EMPTY_MARKER_PAUSE_MS} ms (its owner writes the name right after creating it),
     * so that the error naming both operators names this one too, and with its name unknown after
     * that (its owner may have died in between).
     */
    @Nullable
    @VisibleForTesting
    static OwnerMarker read(FileSystem fs, FileStatus file) throws IOException {
        String operatorId = file.getPath().getName().substring(PREFIX.length());
        for (int reads = 1; ; reads++) {
            try (DataInputStream in = new DataInputStream(fs.open(file.getPath()))) {
                return new OwnerMarker(operatorId, in.readUTF());
            } catch (FileNotFoundException e) {
                return null;
            } catch (EOFException e) {
                if (reads == EMPTY_MARKER_READS || !pause()) {
                    return new OwnerMarker(operatorId, "(name being written)");
                }
            }
        }
    }

    /** Returns false if interrupted, keeping the interrupt. */
    private static boolean pause() {
        try {
            Thread.sleep(EMPTY_MARKER_PAUSE_MS);
            return true;
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            return false;
        }
    }

    private static boolean precedes(FileStatus a, FileStatus b) {
        return a.getModificationTime() != b.getModificationTime()
                ? a.getModificationTime() < b.getModificationTime()
                : a.getPath().getName().compareTo(b.getPath().getName()) < 0;
    }

    /**
     * Written in place, not under a temporary name: a marker's age (its modification time) must
     * not precede the moment others can see it, or an operator that looked in between would take
     * it for younger than its own while the marker's owner takes that one for younger: both would
     * own the directory. A reader may find the marker still empty ({@link #read}).
     */
    private static void write(FileSystem fs, Path own, OwnerMarker self) throws IOException {
        try (FSDataOutputStream raw = fs.create(own, FileSystem.WriteMode.OVERWRITE);
                DataOutputStream out = new DataOutputStream(raw)) {
            out.writeUTF(self.operatorName);
            out.flush();
            raw.sync();
        }
    }

    @Override
    public String toString() {
        return "operator '" + operatorName + "' (operator id " + operatorId + ")";
    }
}
