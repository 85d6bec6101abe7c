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

package org.appendlog.statebackend.log;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.LocalSnapshotDirectoryProvider;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.util.FileUtils;
import org.apache.flink.util.concurrent.ExecutorThreadFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.File;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.Collection;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * The task-local copy of the segments one backend writes, for Flink's local recovery: every byte
 * the log appends goes to a file of the same name in a working directory on local disk too, and
 * each checkpoint's local state is a directory of hard links to the segments it lists (a copy
 * where a link cannot be made), in the checkpoint directory that Flink's task-local state store
 * gives it.
 *
 * <p>Bounded and cleaned up: the working directory holds the segments of the current log (a
 * segment the latest checkpoint no longer lists is deleted from it) and is deleted when the
 * backend is disposed; a checkpoint's directory lives as long as Flink keeps that checkpoint's
 * local state (the latest confirmed one, and pending ones), and the links keep a segment's bytes
 * until the last directory naming it is gone. Everything is under the subtask's local-recovery
 * directories, which Flink deletes when the job leaves the TaskManager.
 *
 * <p>Segments a restore took up from the JobManager's copy are fetched into the working directory
 * in the background, one after the other, so that later checkpoints have them locally too.
 */
public final class LocalLogCopy implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(LocalLogCopy.class);
    private static final String MANIFEST = "manifest";

    private final LocalSnapshotDirectoryProvider directories;
    /** Names this backend's directories, apart from other backends of the same subtask. */
    private final String name;
    private final File working;
    /** The segments the latest kept checkpoint listed. */
    private Set<String> listed = new HashSet<>();
    private volatile boolean closed;
    @Nullable private ExecutorService fetcher;

    public LocalLogCopy(LocalSnapshotDirectoryProvider directories, UUID backendId) {
        this.directories = directories;
        this.name = "appendlog-" + backendId;
        this.working = new File(directories.selectSubtaskBaseDirectory(0), name);
    }

    /** A stream that writes to {@code target} and to the copy of {@code segment}. */
    synchronized CopyingOutputStream copying(OutputStream target, String segment) {
        return copyingInto(working, segment, target);
    }

    /** The directory of checkpoint {@code checkpointId}'s local copy. */
    private File checkpointDirectory(long checkpointId) {
        return new File(directories.subtaskSpecificCheckpointDirectory(checkpointId), name);
    }

    /** A stream writing {@code target} and the checkpoint's local copy of its manifest. */
    public synchronized CopyingOutputStream copyingManifest(
            OutputStream target, long checkpointId) {
        return copyingInto(checkpointDirectory(checkpointId), MANIFEST, target);
    }

    /**
     * The checkpoint's local copy of {@code manifest} if it holds all of it, else {@code
     * manifest} itself.
     */
    public StreamStateHandle manifest(long checkpointId, StreamStateHandle manifest) {
        File copy = new File(checkpointDirectory(checkpointId), MANIFEST);
        return copy.isFile() && copy.length() == manifest.getStateSize()
                ? new FileStateHandle(new Path(copy.toURI()), copy.length())
                : manifest;
    }

    private CopyingOutputStream copyingInto(File dir, String file, OutputStream target) {
        if (!closed && !dir.isDirectory() && !dir.mkdirs()) {
            LOG.warn("Cannot create the task-local copy directory {}", dir);
        }
        return CopyingOutputStream.to(target, new File(dir, file));
    }

    /**
     * Links the copies of {@code segments} into checkpoint {@code checkpointId}'s directory and
     * returns it (segments without a working copy are read remotely). Deletes the working copies
     * of segments that the checkpoint kept before listed and this one does not, unless one is
     * still {@code appending}.
     */
    public synchronized File keep(
            long checkpointId, Collection<String> segments, @Nullable String appending) {
        File dir = checkpointDirectory(checkpointId);
        if (closed) {
            return dir;
        }
        int kept = 0;
        for (String segment : segments) {
            File copy = new File(working, segment);
            if (copy.isFile() && link(copy, new File(dir, segment))) {
                kept++;
            }
        }
        Set<String> now = new HashSet<>(segments);
        for (String segment : listed) {
            if (!now.contains(segment) && !segment.equals(appending)) {
                deleteQuietly(new File(working, segment));
            }
        }
        listed = now;
        LOG.debug(
                "Kept the task-local copy of checkpoint {} in {}: {} of {} segments",
                checkpointId,
                dir,
                kept,
                segments.size());
        return dir;
    }

    /** Takes up a segment that a restore read from a checkpoint's local copy. */
    public synchronized void adopt(String segment, File copy) {
        if (closed || (!working.isDirectory() && !working.mkdirs())) {
            return;
        }
        link(copy, new File(working, segment));
    }

    /**
     * Fetches {@code segments} (restored ones that have no copy here) into the working directory
     * in the background; a checkpoint links each once it is complete. Returns when all are.
     */
    public synchronized Future<?> fetch(Map<String, StreamStateHandle> segments) {
        if (fetcher == null) {
            fetcher =
                    Executors.newSingleThreadExecutor(
                            new ExecutorThreadFactory("appendlog-local-copy " + name));
        }
        return fetcher.submit(
                () -> {
                    for (Map.Entry<String, StreamStateHandle> segment : segments.entrySet()) {
                        if (Thread.currentThread().isInterrupted()) {
                            return;
                        }
                        fetchOne(segment.getKey(), segment.getValue());
                    }
                });
    }

    private void fetchOne(String segment, StreamStateHandle handle) {
        File copy = new File(working, segment);
        File partial = new File(working, segment + ".part");
        try (FSDataInputStream in = handle.openInputStream()) {
            synchronized (this) {
                if (closed || copy.exists()) {
                    return;
                }
                Files.createDirectories(working.toPath());
            }
            Files.copy(in, partial.toPath(), StandardCopyOption.REPLACE_EXISTING);
            synchronized (this) {
                if (!closed) {
                    Files.move(partial.toPath(), copy.toPath(), StandardCopyOption.ATOMIC_MOVE);
                    LOG.debug("Fetched a task-local copy of restored segment {}", copy);
                    return;
                }
            }
            deleteQuietly(partial);
        } catch (IOException e) {
            deleteQuietly(partial);
            if (!closed) {
                LOG.warn(
                        "Cannot fetch a task-local copy of restored segment {} to {}; it stays"
                                + " remote",
                        segment,
                        copy,
                        e);
            }
        }
    }

    /** Deletes the working copy of a segment the log deleted. */
    synchronized void delete(String segment) {
        deleteQuietly(new File(working, segment));
    }

    private static boolean link(File existing, File link) {
        try {
            Files.createDirectories(link.toPath().getParent());
            if (link.exists()) {
                return true;
            }
            try {
                Files.createLink(link.toPath(), existing.toPath());
            } catch (IOException | UnsupportedOperationException noLink) {
                // Another file system (local-recovery directories on several disks), or none
                // that links: a copy of what the segment holds now.
                Files.copy(existing.toPath(), link.toPath(), StandardCopyOption.REPLACE_EXISTING);
            }
            return true;
        } catch (IOException e) {
            LOG.warn("Cannot keep a task-local copy of {} as {}", existing, link, e);
            return false;
        }
    }

    private static void deleteQuietly(File file) {
        if (!file.delete() && file.exists()) {
            LOG.warn("Could not delete the task-local copy {}", file);
        }
    }

    /** Deletes the working copies; the checkpoints' directories are Flink's to delete. */
    @Override
    public synchronized void close() {
        closed = true;
        if (fetcher != null) {
            fetcher.shutdownNow();
        }
        try {
            FileUtils.deleteDirectory(working);
        } catch (IOException e) {
            LOG.warn("Could not delete the task-local log copy {}", working, e);
        }
    }
}
