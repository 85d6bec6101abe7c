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

package org.appendlog.statebackend.faults;

import org.appendlog.statebackend.faults.Fault.Op;

import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemKind;
import org.apache.flink.core.fs.Path;

import java.io.IOException;
import java.net.URI;

/**
 * A Flink file system for the scheme {@code faulty://} that passes every call to a real file
 * system ({@code faulty:///a/b} is {@code <delegate root>/a/b}, the root being {@code file://} or
 * {@code hdfs://host:port}) and lets a test make one chosen operation fail, block or do something
 * to the world first (see {@link Fault}). The backend under test gets it through Flink's normal
 * {@code FileSystem.get}, registered by {@link FaultyFileSystemFactory}.
 */
public final class FaultyFileSystem extends FileSystem {

    public static final String SCHEME = "faulty";

    private static volatile String delegateRoot = "file://";

    /** Where {@code faulty:///} paths really live, e.g. {@code hdfs://localhost:9000}. */
    public static void delegateTo(String root) {
        delegateRoot = root;
    }

    /** The faulty:// URI of a local directory. */
    public static String uriOf(java.nio.file.Path localDir) {
        return SCHEME + "://" + localDir.toAbsolutePath().toUri().getPath();
    }

    static Path real(Path path) {
        return new Path(delegateRoot + path.toUri().getPath());
    }

    private static FileSystem fs(Path path) throws IOException {
        return real(path).getFileSystem();
    }

    /**
     * The Hadoop file system underneath, when the delegate is HDFS: the backend looks for this
     * method (by name) to recover leases, as it does on Flink's own Hadoop file system.
     */
    public Object getHadoopFileSystem() throws Exception {
        FileSystem delegate = new Path(delegateRoot + "/").getFileSystem();
        return delegate.getClass().getMethod("getHadoopFileSystem").invoke(delegate);
    }

    @Override
    public Path getWorkingDirectory() {
        return new Path(SCHEME + ":///");
    }

    @Override
    public Path getHomeDirectory() {
        return getWorkingDirectory();
    }

    @Override
    public URI getUri() {
        return URI.create(SCHEME + ":///");
    }

    @Override
    public FileStatus getFileStatus(Path f) throws IOException {
        return fs(f).getFileStatus(real(f));
    }

    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len)
            throws IOException {
        return fs(file.getPath()).getFileBlockLocations(file, start, len);
    }

    @Override
    public FSDataInputStream open(Path f, int bufferSize) throws IOException {
        return open(f);
    }

    @Override
    public FSDataInputStream open(Path f) throws IOException {
        String path = f.toString();
        if (Fault.before(Op.OPEN, path)) {
            throw Fault.injected(Op.OPEN, path);
        }
        return new FaultyInputStream(fs(f).open(real(f)), path);
    }

    @Override
    public FileStatus[] listStatus(Path f) throws IOException {
        return fs(f).listStatus(real(f));
    }

    @Override
    public boolean delete(Path f, boolean recursive) throws IOException {
        return fs(f).delete(real(f), recursive);
    }

    @Override
    public boolean mkdirs(Path f) throws IOException {
        return fs(f).mkdirs(real(f));
    }

    @Override
    public FSDataOutputStream create(Path f, WriteMode overwriteMode) throws IOException {
        String path = f.toString();
        if (Fault.before(Op.CREATE, path)) {
            throw Fault.injected(Op.CREATE, path);
        }
        return new FaultyOutputStream(fs(f).create(real(f), overwriteMode), path);
    }

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        return fs(src).rename(real(src), real(dst));
    }

    @Override
    public boolean isDistributedFS() {
        return false;
    }

    @Override
    public FileSystemKind getKind() {
        return FileSystemKind.FILE_SYSTEM;
    }

    private static final class FaultyOutputStream extends FSDataOutputStream {
        private final FSDataOutputStream out;
        private final String path;

        FaultyOutputStream(FSDataOutputStream out, String path) {
            this.out = out;
            this.path = path;
        }

        @Override
        public void write(int b) throws IOException {
            if (Fault.before(Op.WRITE, path, 1)) {
                throw Fault.injected(Op.WRITE, path);
            }
            out.write(b);
        }

        @Override
        public void write(byte[] b, int off, int len) throws IOException {
            if (Fault.before(Op.WRITE, path, len)) {
                // A torn write: part of the bytes reach the file before the failure.
                out.write(b, off, len / 2);
                out.flush();
                throw Fault.injected(Op.WRITE, path);
            }
            out.write(b, off, len);
        }

        @Override
        public long getPos() throws IOException {
            return out.getPos();
        }

        @Override
        public void flush() throws IOException {
            out.flush();
        }

        @Override
        public void sync() throws IOException {
            if (Fault.before(Op.SYNC, path)) {
                throw Fault.injected(Op.SYNC, path);
            }
            out.sync();
        }

        @Override
        public void close() throws IOException {
            if (Fault.before(Op.CLOSE, path)) {
                out.close();
                throw Fault.injected(Op.CLOSE, path);
            }
            out.close();
        }
    }

    private static final class FaultyInputStream extends FSDataInputStream {
        private final FSDataInputStream in;
        private final String path;

        FaultyInputStream(FSDataInputStream in, String path) {
            this.in = in;
            this.path = path;
        }

        @Override
        public void seek(long desired) throws IOException {
            in.seek(desired);
        }

        @Override
        public long getPos() throws IOException {
            return in.getPos();
        }

        @Override
        public int read() throws IOException {
            if (Fault.before(Op.READ, path)) {
                throw Fault.injected(Op.READ, path);
            }
            return in.read();
        }

        @Override
        public int read(byte[] b, int off, int len) throws IOException {
            if (Fault.before(Op.READ, path)) {
                throw Fault.injected(Op.READ, path);
            }
            return in.read(b, off, len);
        }

        @Override
        public void close() throws IOException {
            in.close();
        }
    }
}
