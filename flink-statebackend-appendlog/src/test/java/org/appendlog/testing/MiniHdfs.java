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

package org.appendlog.testing;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hdfs.MiniDFSCluster;

import java.io.IOException;
import java.nio.file.Path;

/** A NameNode and one DataNode in this JVM, their files under a given directory. */
public final class MiniHdfs implements AutoCloseable {

    private final MiniDFSCluster cluster;

    public MiniHdfs(Path baseDir) throws IOException {
        Configuration conf = new Configuration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, baseDir.toAbsolutePath().toString());
        cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
        cluster.waitActive();
    }

    /** {@code hdfs://localhost:<port>}, to which paths are appended. */
    public String root() {
        return "hdfs://localhost:" + cluster.getNameNodePort();
    }

    /** A Hadoop client of this cluster, as the user running the tests (its superuser). */
    public org.apache.hadoop.fs.FileSystem fileSystem() throws IOException {
        return cluster.getFileSystem();
    }

    @Override
    public void close() {
        cluster.shutdown();
    }
}
