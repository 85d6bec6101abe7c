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

    @Override
    public void close() {
        cluster.shutdown();
    }
}
