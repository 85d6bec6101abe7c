package org.appendlog.cec.log;

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.Path;

import java.io.IOException;

/**
 * The file streams of one open segment and its time index, shared by the task thread, which
 * writes and closes them, and a checkpoint's asynchronous part, which makes them durable. The two
 * never race: closing waits for a running sync, and a sync of a closed segment does nothing,
 * because a segment is synced before it is closed.
 */
public final class SegmentSync {

    private final Path segment;
    private final FSDataOutputStream data;
    private final FSDataOutputStream index;
    private boolean closed;

    SegmentSync(Path segment, FSDataOutputStream data, FSDataOutputStream index) {
        this.segment = segment;
        this.data = data;
        this.index = index;
    }

    /** Makes every byte handed to the file system so far durable, unless the segment is closed (and durable). */
    public synchronized void sync() throws IOException {
        if (!closed) {
            syncStreams();
        }
    }

    synchronized void close() throws IOException {
        if (closed) {
            return;
        }
        syncStreams();
        closed = true;
        data.close();
        index.close();
    }

    private void syncStreams() throws IOException {
        data.flush();
        data.sync();
        index.flush();
        index.sync();
    }

    public Path segment() {
        return segment;
    }
}
