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
