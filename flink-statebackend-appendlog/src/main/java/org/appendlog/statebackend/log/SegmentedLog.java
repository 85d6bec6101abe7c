package org.appendlog.statebackend.log;

import org.appendlog.statebackend.SyncMode;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.util.IOUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * The writer's view of the log: it appends batches to the active segment, one sync per batch,
 * rolls segments at the size threshold, and hands out the state handle of each segment.
 *
 * <p>A segment's handle is created once, when a checkpoint first refers to it, and the same
 * (equal) handle is used by every later checkpoint, as Flink's {@code SharedStateRegistry}
 * requires; the registry deletes the file once no retained checkpoint refers to it.
 */
public final class SegmentedLog implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(SegmentedLog.class);

    private final FileSystem fs;
    private final Path dir;
    private final String namePrefix;
    private final long segmentSize;
    private final SyncMode syncMode;

    private final Map<String, Path> ownSegments = new HashMap<>();
    private final Map<String, Long> segmentEnds = new HashMap<>();
    private final Map<String, StreamStateHandle> handles = new HashMap<>();
    private LogSegment active;
    private int nextSequence;
    private long bytesAppended;

    public SegmentedLog(
            FileSystem fs, Path dir, String namePrefix, long segmentSize, SyncMode syncMode) {
        this.fs = fs;
        this.dir = dir;
        this.namePrefix = namePrefix;
        this.segmentSize = segmentSize;
        this.syncMode = syncMode;
    }

    /** Appends one batch and makes it durable (group commit). */
    public synchronized BatchLocation append(BatchBuilder batch) throws IOException {
        if (active == null) {
            String name = String.format("%s-%06d.seg", namePrefix, nextSequence++);
            active = LogSegment.create(fs, dir, name);
            ownSegments.put(name, active.path);
            LOG.debug("Opened state log segment {}", active.path);
        }
        try {
            BatchLocation location =
                    BatchFormat.write(active.out, active.name, active.position(), batch);
            syncMode.commit(active.out);
            bytesAppended += location.length();
            segmentEnds.put(active.name, location.offset() + location.length());
            LOG.debug(
                    "Appended batch of checkpoint {} ({} records) to {} at offset {}, {} bytes",
                    batch.checkpointId(),
                    batch.recordCount(),
                    active.path,
                    location.offset(),
                    location.length());
            if (active.position() >= segmentSize) {
                closeActive();
            }
            return location;
        } catch (IOException | RuntimeException e) {
            // The segment may end in a torn batch now; no handle will ever point past the last
            // good batch, and later batches go to a fresh segment.
            LOG.warn("Append to state log segment {} failed; abandoning it", active.path, e);
            IOUtils.closeQuietly(active.out);
            active = null;
            throw e;
        }
    }

    private void closeActive() throws IOException {
        LogSegment closing = active;
        active = null;
        closing.out.close();
        LOG.debug("Closed state log segment {}", closing.path);
    }

    /** The handle under which checkpoints refer to {@code segment}. */
    public synchronized StreamStateHandle handle(String segment) throws IOException {
        StreamStateHandle handle = handles.get(segment);
        if (handle == null) {
            Path path = ownSegments.get(segment);
            if (path == null) {
                throw new IllegalStateException("Unknown state log segment " + segment);
            }
            handle = new FileStateHandle(path, segmentEnds.getOrDefault(segment, 0L));
            handles.put(segment, handle);
        }
        return handle;
    }

    /** Segments of a restored checkpoint keep the handles under which they were registered. */
    public synchronized void adopt(String segment, StreamStateHandle handle) {
        handles.putIfAbsent(segment, handle);
    }

    public synchronized long bytesAppended() {
        return bytesAppended;
    }

    public Path directory() {
        return dir;
    }

    @Override
    public synchronized void close() throws IOException {
        if (active != null) {
            closeActive();
        }
    }
}
