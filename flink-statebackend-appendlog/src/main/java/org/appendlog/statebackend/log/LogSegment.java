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

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.util.IOUtils;

import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.IOException;
import java.io.OutputStream;

/**
 * The active, open segment: an append-only file written by exactly one backend instance, and
 * with local recovery on, its task-local copy.
 */
final class LogSegment implements Closeable {

    final String name;
    final Path path;
    final FSDataOutputStream out;
    /** Where batches are written: {@link #out}, or a stream copying it locally. */
    final OutputStream sink;

    private LogSegment(String name, Path path, FSDataOutputStream out, OutputStream sink) {
        this.name = name;
        this.path = path;
        this.out = out;
        this.sink = sink;
    }

    static LogSegment create(
            FileSystem fs,
            Path dir,
            String name,
            FilePermissions permissions,
            @Nullable LocalLogCopy localCopy)
            throws IOException {
        Path path = new Path(dir, name);
        FSDataOutputStream out;
        try {
            out = fs.create(path, FileSystem.WriteMode.NO_OVERWRITE);
        } catch (IOException e) {
            throw HadoopFileSystems.namingUser(e, fs, "Cannot create state log segment " + path);
        }
        try {
            // Before the first byte: the file holds no state until its mode is set.
            permissions.restrictFile(fs, path);
        } catch (IOException | RuntimeException e) {
            IOUtils.closeQuietly(out);
            fs.delete(path, false);
            throw e;
        }
        OutputStream sink = localCopy == null ? out : localCopy.copying(out, name);
        sink.write(BatchFormat.segmentHeader());
        return new LogSegment(name, path, out, sink);
    }

    long position() throws IOException {
        return out.getPos();
    }

    /** Hands what was appended to the local copy, if any, to the local file system. */
    void flushCopy() {
        if (sink instanceof CopyingOutputStream) {
            ((CopyingOutputStream) sink).flushCopy();
        }
    }

    @Override
    public void close() throws IOException {
        sink.close();
    }
}
