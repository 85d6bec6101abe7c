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

package org.appendlog.bench.harness;

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.IOException;
import java.util.function.ObjLongConsumer;

/** The files under a directory of any Flink {@link FileSystem} (local, hdfs), listed recursively. */
final class FileTree implements StoredEntries {

    private final Path root;

    FileTree(String rootUri) {
        this.root = new Path(rootUri);
    }

    @Override
    public void list(ObjLongConsumer<String> entry) throws IOException {
        FileSystem fs = root.getFileSystem();
        if (fs.exists(root)) {
            list(fs, root, entry);
        }
    }

    private static void list(FileSystem fs, Path dir, ObjLongConsumer<String> entry) throws IOException {
        FileStatus[] children = fs.listStatus(dir);
        if (children == null) {
            return;
        }
        for (FileStatus child : children) {
            if (child.isDir()) {
                list(fs, child.getPath(), entry);
            } else {
                entry.accept(child.getPath().toString(), child.getLen());
            }
        }
    }
}
