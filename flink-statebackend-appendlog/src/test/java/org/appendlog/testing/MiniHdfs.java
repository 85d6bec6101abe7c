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
import org.apache.hadoop.hdfs.MiniDFSCluster.DataNodeProperties;

import java.io.IOException;
import java.nio.file.Path;

/**
 * A NameNode and one DataNode in this JVM, their files under a given directory. The DataNode
 * can be stopped and restarted; it comes back on its own ports, as a DataNode with configured
 * ports does ({@link ListeningPorts}).
 */
public final class MiniHdfs implements AutoCloseable {

    private final MiniDFSCluster cluster;
    private DataNodeProperties stopped;

    public MiniHdfs(Path baseDir) throws IOException {
        this(baseDir, new Configuration());
    }

    /** A cluster with the given client and server settings. */
    public MiniHdfs(Path baseDir, Configuration conf) throws IOException {
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, baseDir.toAbsolutePath().toString());
        ListeningPorts ports = new ListeningPorts();
        conf.set("dfs.datanode.address", "127.0.0.1:" + ports.next());
        conf.set("dfs.datanode.ipc.address", "127.0.0.1:" + ports.next());
        conf.set("dfs.datanode.http.address", "127.0.0.1:" + ports.next());
        cluster =
                new MiniDFSCluster.Builder(conf)
                        .numDataNodes(1)
                        .checkDataNodeAddrConfig(true)
                        .build();
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

    /**
     * Stops the DataNode as a crash would leave it to its clients: the NameNode still counts it
     * live until its heartbeats expire.
     */
    public void stopDataNode() {
        if (stopped == null) {
            stopped = cluster.stopDataNode(0);
        }
    }

    /** Starts the stopped DataNode again, if there is one, and waits until it has registered. */
    public void startDataNode() throws IOException {
        if (stopped != null) {
            cluster.restartDataNode(stopped, true);
            stopped = null;
            cluster.waitActive();
        }
    }

    /** Stops the DataNode and starts it again. */
    public void restartDataNode() throws IOException {
        stopDataNode();
        startDataNode();
    }

    @Override
    public void close() {
        cluster.shutdown();
    }
}
