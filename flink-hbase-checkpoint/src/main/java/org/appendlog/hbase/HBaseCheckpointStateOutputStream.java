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

package org.appendlog.hbase;

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

import javax.annotation.Nullable;

import java.io.IOException;

/**
 * One state stream of a checkpoint. Streams up to the inline threshold become a {@link
 * ByteStreamStateHandle} inside the metadata; larger ones are written as chunk rows and become a
 * {@link FileStateHandle} on their {@code hbase://} path, returned only after HBase acknowledged
 * every chunk and the row that records the stream's length.
 */
final class HBaseCheckpointStateOutputStream extends CheckpointStateOutputStream {

    private final ChunkedStreamWriter writer;
    private final int inlineThreshold;

    HBaseCheckpointStateOutputStream(HBaseStorageSettings settings, String streamKey) {
        this.writer = new ChunkedStreamWriter(settings, streamKey);
        this.inlineThreshold = settings.inlineThreshold;
    }

    @Override
    public void write(int b) throws IOException {
        writer.write(b);
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
        writer.write(bytes, offset, length);
    }

    @Override
    public long getPos() {
        return writer.position();
    }

    /** Chunks are sent when full; buffering the rest is what keeps small streams inline. */
    @Override
    public void flush() {}

    @Override
    public void sync() throws IOException {
        writer.sync();
    }

    @Override
    @Nullable
    public StreamStateHandle closeAndGetHandle() throws IOException {
        writer.closeForResult();
        // Nothing written: no state, as Flink's file streams say (an operator that opened raw
        // state and wrote nothing has none, and a restore need not map it).
        if (writer.position() == 0) {
            return null;
        }
        if (!writer.hasShippedChunks() && writer.position() <= inlineThreshold) {
            return new ByteStreamStateHandle(writer.uri(), writer.bufferedBytes());
        }
        try {
            long length = writer.finish(true);
            return new FileStateHandle(new Path(writer.uri()), length);
        } catch (IOException | RuntimeException e) {
            writer.discard();
            throw e;
        }
    }

    @Override
    public void close() {
        writer.close();
    }
}
