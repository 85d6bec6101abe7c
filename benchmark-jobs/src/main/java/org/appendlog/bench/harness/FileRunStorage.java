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

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.Path;

import java.io.IOException;
import java.util.Collections;
import java.util.List;

/**
 * A run on a file system (local or hdfs): checkpoints in {@code <root>/checkpoints} through Flink's
 * file system checkpoint storage, the backends' logs in subdirectories of the same root.
 */
final class FileRunStorage implements RunStorage {

    private final String root;

    /** {@code root}: a directory URI, without a trailing slash. */
    FileRunStorage(String root) {
        this.root = root;
    }

    @Override
    public void configureCheckpoints(Configuration conf) {
        conf.setString("execution.checkpointing.storage", "filesystem");
        conf.setString("execution.checkpointing.dir", root + "/checkpoints");
    }

    @Override
    public String logDirectory() {
        return root;
    }

    @Override
    public List<StoredEntries> contents() {
        return Collections.singletonList(new FileTree(root));
    }

    @Override
    public double writeBandwidth(int megabytes) throws IOException {
        return StorageBandwidth.ofFile(root, megabytes);
    }

    @Override
    public void delete() {
        try {
            Path path = new Path(root);
            path.getFileSystem().delete(path, true);
        } catch (IOException e) {
            // leftovers live in the work directory, which is deleted at the end
        }
    }
}
