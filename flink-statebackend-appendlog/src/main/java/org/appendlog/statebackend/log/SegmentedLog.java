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

import org.appendlog.statebackend.SyncMode;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.util.IOUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The writer's view of the log: it appends batches to the active segment, one sync per batch,
 * rolls segments at the size threshold, and hands out the state handle of each segment. Segments
 * it is done with are closed in the background ({@link SegmentCloser}).
 *
 * <p>Every checkpoint gets an equal handle for a segment (Flink's {@code SharedStateRegistry}
 * identifies file handles by their path and keeps the first one registered), carrying the
 * segment's size as of that checkpoint, so that checkpoints report the state's real size; the
 * snapshot strategy lists segments that a completed checkpoint refers to as placeholders. The
 * registry deletes the file once no retained checkpoint refers to it.
 *
 * <p>With sealed segments (on object stores, {@link ObjectStoreDetector}), every batch goes to a
 * segment of its own, closed before {@link #append} returns: there the bytes of a stream exist
 * only once it is closed, so a sync would leave an acknowledged checkpoint naming bytes that exist
 * nowhere. Compaction merges the small segments (its count trigger) so that handles stay short.
 */
public final class SegmentedLog implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(SegmentedLog.class);
    private static final CompletableFuture<Void> CLOSED = CompletableFuture.completedFuture(null);

    private final FileSystem fs;
    private final Path dir;
    private final String namePrefix;
    private final long segmentSize;
    private final SyncMode syncMode;
    private final BatchCompression compression;
    /** Whether every batch is sealed: written to a segment of its own, closed before it counts. */
    private final boolean sealEveryBatch;
    private final FilePermissions permissions;
    /** With Flink's local backup on: where the segments are copied to on local disk. */
    @Nullable private volatile LocalLogCopy localCopy;

    private final Map<String, Path> ownSegments = new HashMap<>();
    private final Map<String, Long> segmentEnds = new HashMap<>();
    /** Own segments that some checkpoint refers to. */
    private final Set<String> handedOut = new HashSet<>();
    /** Segments of a restored checkpoint, never appended to: the handles they came with. */
    private final Map<String, StreamStateHandle> adopted = new HashMap<>();
    private final SegmentCloser closer;
    private final ReferenceFloor floor = new ReferenceFloor();
    private volatile WriterLineage lineage = WriterLineage.NONE;
    private volatile CompletableFuture<Integer> orphanSweep = CompletableFuture.completedFuture(0);
    /** Segments handed to the closer and not closed yet. */
    private final Map<String, CompletableFuture<Void>> closing = new ConcurrentHashMap<>();
    private LogSegment active;
    /**
     * Closed by the backend's dispose, which does not wait for asynchronous phases that the task
     * interrupted: a segment they opened after the close would be nobody's to delete.
     */
    private boolean closed;
    private int nextSequence;
    private int nextRun;
    private long bytesAppended;

    public SegmentedLog(
            FileSystem fs,
            Path dir,
            String namePrefix,
            long segmentSize,
            SyncMode syncMode,
            BatchCompression compression,
            boolean sealEveryBatch,
            FilePermissions permissions) {
        this.fs = fs;
        this.dir = dir;
        this.namePrefix = namePrefix;
        this.segmentSize = segmentSize;
        this.syncMode = syncMode;
        this.compression = compression;
        this.sealEveryBatch = sealEveryBatch;
        this.permissions = permissions;
        this.closer = new SegmentCloser(namePrefix);
    }

    /**
     * Gives a checkpoint's manifest, written through Flink's checkpoint storage, the file
     * permissions of the log's segments, if Flink wrote it to a file of its own (small ones are
     * inlined into the checkpoint's metadata).
     */
    public void restrictManifest(StreamStateHandle manifest) throws IOException {
        if (manifest instanceof FileStateHandle) {
            Path path = ((FileStateHandle) manifest).getFilePath();
            permissions.restrictFile(path.getFileSystem(), path);
        }
    }

    /**
     * Copies every segment created from now on to {@code copy} as it is written, for Flink's
     * local recovery; the log closes it.
     */
    public void copyLocally(LocalLogCopy copy) {
        this.localCopy = copy;
    }

    /** The task-local copy of the segments, or null without local backup. */
    @Nullable
    public LocalLogCopy localCopy() {
        return localCopy;
    }

    /** Whether every batch goes to a segment of its own, closed before its append returns. */
    public boolean sealsEveryBatch() {
        return sealEveryBatch;
    }

    /** The lowest checkpoint that may refer to a file created now; its name carries it. */
    public ReferenceFloor floor() {
        return floor;
    }

    /** The writers the checkpoints of this log descend from; each manifest records them. */
    public WriterLineage lineage() {
        return lineage;
    }

    public void continueLineage(WriterLineage lineage) {
        this.lineage = lineage;
    }

    /** Starts {@code sweep} in the background, once, after the restore. */
    public void sweepOrphans(OrphanSweep sweep) {
        orphanSweep = sweep.start();
    }

    /** The sweep after the restore: how many files it deleted. */
    public CompletableFuture<Integer> orphanSweep() {
        return orphanSweep;
    }

    /** How the batches this log writes store their key groups; savepoints use it too. */
    public BatchCompression compression() {
        return compression;
    }

    /**
     * Appends one batch and makes it durable (group commit). The active segment is appended to
     * only if it is one of {@code confirmedSegments}, those a completed checkpoint refers to:
     * otherwise only pending checkpoints refer to it, and if the task discards one of them before
     * the JobManager registered it, Flink deletes the segment with it. A fresh segment is opened
     * instead.
     */
    public synchronized BatchLocation append(BatchBuilder batch, Set<String> confirmedSegments)
            throws IOException {
        return append(
                (out, segment, position) ->
                        BatchFormat.write(out, segment, position, batch, compression),
                confirmedSegments);
    }

    /** Writes one batch to a segment's stream at {@code position}; returns where it landed. */
    @FunctionalInterface
    public interface BatchWriter {
        BatchLocation write(OutputStream out, String segment, long position) throws IOException;
    }

    /**
     * Appends the batch that {@code writer} writes (a {@link BatchStream}, which never holds the
     * whole batch), as {@link #append(BatchBuilder, Set)} does.
     */
    public synchronized BatchLocation append(BatchWriter writer, Set<String> confirmedSegments)
            throws IOException {
        checkOpen();
        if (active != null && !confirmedSegments.contains(active.name)) {
            closeActive();
        }
        if (active == null) {
            String name = String.format("%s-c%d-%06d.seg", namePrefix, floor.get(), nextSequence++);
            active = LogSegment.create(fs, dir, name, permissions, localCopy);
            bytesAppended += active.position();
            ownSegments.put(name, active.path);
            LOG.debug("Opened state log segment {}", active.path);
        }
        try {
            BatchLocation location = writer.write(active.sink, active.name, active.position());
            if (!sealEveryBatch) {
                // A sealed batch is made durable by its close below; on an object store a sync
                // is a no-op at best, and S3A can be set to refuse it.
                syncMode.commit(active.out);
            }
            active.flushCopy();
            bytesAppended += location.length();
            segmentEnds.put(active.name, location.offset() + location.length());
            LOG.debug(
                    "Appended batch of checkpoint {} to {} at offset {}, {} bytes",
                    location.checkpointId(),
                    active.path,
                    location.offset(),
                    location.length());
            if (sealEveryBatch) {
                // On an object store the close uploads the object: no handle may name it before.
                active.close();
                LOG.debug("Sealed state log segment {}", active.path);
                active = null;
            } else if (active.position() >= segmentSize) {
                closeActive();
            }
            return location;
        } catch (IOException | RuntimeException e) {
            // The segment may end in a torn batch now; no handle will ever point past the last
            // good batch, and later batches go to a fresh segment.
            LOG.warn("Append to state log segment {} failed; abandoning it", active.path, e);
            IOUtils.closeQuietly(active);
            active = null;
            throw e;
        }
    }

    /**
     * Writes a compacted run as a segment of its own, synced and closed before it returns, so a
     * checkpoint can refer to it at once.
     */
    public BatchLocation writeRun(BatchBuilder run) throws IOException {
        String name;
        synchronized (this) {
            checkOpen();
            name = String.format("%s-c%d-run-%06d.seg", namePrefix, floor.get(), nextRun++);
        }
        LogSegment segment = LogSegment.create(fs, dir, name, permissions, localCopy);
        BatchLocation location;
        try {
            location = BatchFormat.write(segment.sink, name, segment.position(), run, compression);
            if (!sealEveryBatch) {
                syncMode.commit(segment.out);
            }
            segment.close();
        } catch (IOException | RuntimeException e) {
            IOUtils.closeQuietly(segment);
            deleteQuietly(segment.path);
            throw e;
        }
        synchronized (this) {
            if (closed) {
                deleteQuietly(segment.path);
                checkOpen();
            }
            ownSegments.put(name, segment.path);
            segmentEnds.put(name, location.offset() + location.length());
        }
        LOG.info(
                "Wrote compacted run {} ({} records, {} bytes)",
                segment.path,
                run.recordCount(),
                location.length());
        return location;
    }

    /** Forgets a run that no checkpoint listed and the log will not take up, and deletes it. */
    public synchronized void discardRun(String segment) {
        Path path = ownSegments.remove(segment);
        segmentEnds.remove(segment);
        if (path != null) {
            deleteQuietly(path);
        }
    }

    private void checkOpen() throws IOException {
        if (closed) {
            throw new IOException("The state log in " + dir + " is closed (its backend was disposed)");
        }
    }

    private void deleteQuietly(Path path) {
        LocalLogCopy copy = localCopy;
        if (copy != null) {
            copy.delete(path.getName());
        }
        try {
            fs.delete(path, false);
            LOG.debug("Deleted unreferenced state log segment {}", path);
        } catch (IOException e) {
            LOG.warn("Could not delete unreferenced state log segment {}", path, e);
        }
    }

    /** Hands the active segment to the closer; the next append opens a new one. */
    private void closeActive() {
        LogSegment done = active;
        active = null;
        CompletableFuture<Void> closed = closer.close(done);
        closing.put(done.name, closed);
        closed.whenComplete((ignored, failure) -> closing.remove(done.name));
    }

    /** The handle under which a checkpoint refers to {@code segment} now. */
    public synchronized StreamStateHandle handle(String segment) {
        if (closed) {
            // Its segments may be deleted already.
            throw new IllegalStateException(
                    "The state log in " + dir + " is closed; no handle for segment " + segment);
        }
        StreamStateHandle restored = adopted.get(segment);
        if (restored != null) {
            return restored;
        }
        Path path = ownSegments.get(segment);
        if (path == null) {
            throw new IllegalStateException("Unknown state log segment " + segment);
        }
        handedOut.add(segment);
        return new FileStateHandle(path, segmentEnds.getOrDefault(segment, 0L));
    }

    /** Whether a checkpoint was given {@code segment}: its handle was made by {@link #handle}. */
    public synchronized boolean isHandedOut(String segment) {
        return handedOut.contains(segment);
    }

    /** Segments of a restored checkpoint keep the handles under which they were registered. */
    public synchronized void adopt(String segment, StreamStateHandle handle) {
        adopted.putIfAbsent(segment, handle);
    }

    private boolean referenced(String segment) {
        return handedOut.contains(segment) || adopted.containsKey(segment);
    }

    /** The segment batches are appended to now, or null between segments. */
    public synchronized String activeSegment() {
        return active == null ? null : active.name;
    }

    /** Bytes written to the segments this log created, headers included. */
    public synchronized long bytesAppended() {
        return bytesAppended;
    }

    public Path directory() {
        return dir;
    }

    /**
     * Closes the log for good: the active segment is closed in the background, and this log's own
     * segments that no checkpoint was ever given (a run that no checkpoint took up, a segment
     * whose batches all belonged to failed checkpoints) are deleted, each once it is closed. The
     * shared state registry knows nothing of those, so nobody else would delete them.
     */
    @Override
    public synchronized void close() {
        if (closed) {
            return;
        }
        closed = true;
        if (active != null) {
            closeActive();
        }
        closer.shutdown();
        for (Map.Entry<String, Path> segment : ownSegments.entrySet()) {
            if (!referenced(segment.getKey())) {
                Path path = segment.getValue();
                // at once if the segment is closed already, else after its close
                closing.getOrDefault(segment.getKey(), CLOSED)
                        .whenComplete((ignored, failure) -> deleteQuietly(path));
            }
        }
        IOUtils.closeQuietly(localCopy);
    }
}
