package org.appendlog.bench.harness;

import org.apache.hadoop.hdfs.MiniDFSCluster;

import java.io.File;
import java.io.IOException;
import java.util.Locale;

/**
 * The checkpoint storages the harness writes to: local files under the work directory, and HDFS on
 * a real NameNode and DataNode started in this JVM ({@link MiniDFSCluster}) the first time a run
 * needs it.
 */
public final class Storages implements AutoCloseable {

    public static final String LOCAL = "local";
    public static final String HDFS = "hdfs";

    private final File workDir;
    private MiniDFSCluster dfs;

    public Storages(File workDir) {
        this.workDir = workDir;
    }

    public static String parse(String name) {
        String storage = name.trim().toLowerCase(Locale.ROOT);
        if (storage.equals(LOCAL) || storage.equals(HDFS)) {
            return storage;
        }
        if (storage.equals("hbase")) {
            throw new IllegalArgumentException(
                    "The HBase checkpoint storage is not part of the harness yet: use local or hdfs");
        }
        throw new IllegalArgumentException("Unknown storage '" + name + "': use local or hdfs");
    }

    /** A fresh directory URI on {@code storage} for the run {@code runName}. */
    public String rootFor(String storage, String runName) throws IOException {
        if (storage.equals(LOCAL)) {
            File dir = new File(workDir, "storage/" + runName);
            if (!dir.mkdirs() && !dir.isDirectory()) {
                throw new IOException("Cannot create the local storage directory " + dir);
            }
            return dir.toURI().toString().replaceAll("/$", "");
        }
        return hdfs() + "/bench/" + runName;
    }

    private String hdfs() throws IOException {
        if (dfs == null) {
            org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration();
            conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, new File(workDir, "hdfs").getAbsolutePath());
            conf.setInt("dfs.replication", 1);
            dfs = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
            dfs.waitActive();
        }
        return "hdfs://localhost:" + dfs.getNameNodePort();
    }

    @Override
    public void close() {
        if (dfs != null) {
            dfs.shutdown();
            dfs = null;
        }
    }
}
