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

import org.apache.flink.core.fs.BlockLocation;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemKind;
import org.apache.flink.core.fs.Path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.net.URI;

/**
 * The {@code hbase://<table>/} paths of checkpoint state, seen as read-and-delete files.
 *
 * <p>Why a file system: Flink writes a checkpoint's {@code _metadata} with its own serializer,
 * which only knows Flink's state handle classes. The storage therefore hands out plain {@link
 * org.apache.flink.runtime.state.filesystem.FileStateHandle}s whose path is {@code
 * hbase://<table>/<stream key>}; they survive the metadata round trip unchanged, and whenever
 * Flink opens or discards one (on the task managers when restoring, on the job manager when a
 * checkpoint is subsumed) it asks this file system, which turns the path back into rows.
 *
 * <p>Writing goes through the checkpoint storage only, so creating, renaming and listing are not
 * offered.
 */
final class HBaseStateFileSystem extends FileSystem {

    private static final Logger LOG = LoggerFactory.getLogger(HBaseStateFileSystem.class);

    private final URI uri;
    private final String tableName;

    HBaseStateFileSystem(URI uri) {
        this.uri = uri;
        this.tableName = uri.getAuthority();
    }

    private static String keyOf(Path path) {
        String key = path.toUri().getPath();
        while (key.startsWith("/")) {
            key = key.substring(1);
        }
        while (key.endsWith("/")) {
            key = key.substring(0, key.length() - 1);
        }
        return key;
    }

    private CheckpointTable table() throws IOException {
        return CheckpointTables.byName(tableName);
    }

    @Override
    public FSDataInputStream open(Path path, int bufferSize) throws IOException {
        return open(path);
    }

    @Override
    public FSDataInputStream open(Path path) throws IOException {
        return HBaseStateInputStream.open(table(), keyOf(path));
    }

    @Override
    public FileStatus getFileStatus(Path path) throws IOException {
        return new StreamStatus(path, table().length(keyOf(path)));
    }

    /**
     * Non-recursive: the rows of one stream. Recursive: every row under the path, all buckets.
     * Deletes also on an interrupted thread, as a local file system does (see {@link
     * CheckpointTable}): Flink discards a cancelled upload from the thread it interrupted.
     */
    @Override
    public boolean delete(Path path, boolean recursive) throws IOException {
        CheckpointTable table = table();
        String key = keyOf(path);
        int rows = recursive ? table.deleteDirectory(key) : 0;
        rows += table.deleteStream(key);
        LOG.debug("Deleted {}: {} rows", path, rows);
        return true;
    }

    @Override
    public BlockLocation[] getFileBlockLocations(FileStatus file, long start, long len) {
        return new BlockLocation[0];
    }

    @Override
    public FileStatus[] listStatus(Path path) {
        throw writtenByStorageOnly("list");
    }

    @Override
    public boolean mkdirs(Path path) {
        throw writtenByStorageOnly("create directories under");
    }

    @Override
    public FSDataOutputStream create(Path path, WriteMode overwriteMode) {
        throw writtenByStorageOnly("create");
    }

    @Override
    public boolean rename(Path src, Path dst) {
        throw writtenByStorageOnly("rename");
    }

    private UnsupportedOperationException writtenByStorageOnly(String operation) {
        return new UnsupportedOperationException(
                "Cannot "
                        + operation
                        + " "
                        + uri
                        + " paths: they hold checkpoint rows written by the HBase checkpoint"
                        + " storage and can only be read and deleted.");
    }

    @Override
    public Path getWorkingDirectory() {
        return new Path(uri);
    }

    @Override
    public Path getHomeDirectory() {
        return new Path(uri);
    }

    @Override
    public URI getUri() {
        return uri;
    }

    @Override
    public boolean isDistributedFS() {
        return true;
    }

    @Override
    public FileSystemKind getKind() {
        return FileSystemKind.OBJECT_STORE;
    }

    private static final class StreamStatus implements FileStatus {
        private final Path path;
        private final long length;

        StreamStatus(Path path, long length) {
            this.path = path;
            this.length = length;
        }

        @Override
        public long getLen() {
            return length;
        }

        @Override
        public long getBlockSize() {
            return length;
        }

        @Override
        public short getReplication() {
            return 1;
        }

        @Override
        public long getModificationTime() {
            return 0;
        }

        @Override
        public long getAccessTime() {
            return 0;
        }

        @Override
        public boolean isDir() {
            return false;
        }

        @Override
        public Path getPath() {
            return path;
        }
    }
}
