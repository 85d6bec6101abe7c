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

import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.util.Locale;

/**
 * The checkpoint storages the harness writes to: local files under the work directory, HDFS on a
 * real NameNode and DataNode ({@link MiniDFSCluster}), and HBase on a real mini cluster (ZooKeeper,
 * HDFS, master, one region server: {@link HBaseTestingUtility}), each started in this JVM the first
 * time a run needs it and shut down by {@link #close()}.
 */
public final class Storages implements AutoCloseable {

    public static final String LOCAL = "local";
    public static final String HDFS = "hdfs";
    public static final String HBASE = "hbase";

    private static final String[] HBASE_OPENS = {
        "java.lang", "java.lang.reflect", "java.util", "java.util.concurrent", "java.io", "java.nio", "java.net",
        "sun.nio.ch"
    };

    private static final Logger LOG = LoggerFactory.getLogger(Storages.class);

    private final File workDir;
    private MiniDFSCluster dfs;
    private HBaseTestingUtility hbase;
    private IOException hbaseFailure;

    public Storages(File workDir) {
        this.workDir = workDir;
    }

    public static String parse(String name) {
        String storage = name.trim().toLowerCase(Locale.ROOT);
        if (storage.equals(LOCAL) || storage.equals(HDFS) || storage.equals(HBASE)) {
            return storage;
        }
        throw new IllegalArgumentException("Unknown storage '" + name + "': use local, hdfs or hbase");
    }

    /** A fresh place on {@code storage} for the run {@code runName}. */
    RunStorage forRun(String storage, String runName) throws IOException {
        switch (storage) {
            case LOCAL:
                return new FileRunStorage(localDirectory(runName));
            case HDFS:
                return new FileRunStorage(hdfs() + "/bench/" + runName);
            case HBASE:
                HBaseTestingUtility cluster = hbase();
                return new HBaseRunStorage(
                        "localhost:" + cluster.getZkCluster().getClientPort(),
                        cluster.getConnection(),
                        TableName.valueOf("bench_" + runName.replaceAll("[^A-Za-z0-9_.-]", "_")),
                        new FileRunStorage(localDirectory(runName)));
            default:
                throw new IllegalArgumentException("Unknown storage '" + storage + "'");
        }
    }

    private String localDirectory(String runName) throws IOException {
        File dir = new File(workDir, "storage/" + runName);
        if (!dir.mkdirs() && !dir.isDirectory()) {
            throw new IOException("Cannot create the local storage directory " + dir);
        }
        return dir.toURI().toString().replaceAll("/$", "");
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

    /**
     * Starting takes 20-30 s on a busy 2-core machine and has been seen to fail once ("Master not
     * active"), so the waits are raised and a failed start is retried once.
     */
    private HBaseTestingUtility hbase() throws IOException {
        if (hbaseFailure != null) {
            // every later hbase run fails with the same cause instead of two more slow attempts
            throw hbaseFailure;
        }
        if (hbase == null) {
            hbaseFailure = missingOpens();
            if (hbaseFailure != null) {
                throw hbaseFailure;
            }
            try {
                hbase = startHBase();
            } catch (Exception first) {
                LOG.warn("The HBase mini cluster did not start, retrying once", first);
                try {
                    hbase = startHBase();
                } catch (Exception second) {
                    second.addSuppressed(first);
                    hbaseFailure = new IOException("Cannot start the HBase mini cluster", second);
                    throw hbaseFailure;
                }
            }
        }
        return hbase;
    }

    /**
     * The HBase mini cluster reflects into these java.base packages (e.g. {@code
     * HFileSystem.addLocationsOrderInterceptor}); on Java 17 they must be opened at JVM start.
     */
    private static IOException missingOpens() {
        StringBuilder options = new StringBuilder();
        for (String pkg : HBASE_OPENS) {
            if (!Object.class.getModule().isOpen(pkg, Storages.class.getModule())) {
                options.append(" --add-opens=java.base/").append(pkg).append("=ALL-UNNAMED");
            }
        }
        if (options.length() == 0) {
            return null;
        }
        return new IOException(
                "The HBase mini cluster needs java.base packages opened to it: start the JVM with"
                        + options + " (for the bench command under Maven: in MAVEN_OPTS)");
    }

    private HBaseTestingUtility startHBase() throws Exception {
        HBaseTestingUtility candidate = new HBaseTestingUtility();
        org.apache.hadoop.conf.Configuration conf = candidate.getConfiguration();
        conf.setInt("hbase.master.wait.on.regionservers.timeout", 120_000);
        conf.setInt("hbase.master.wait.on.service.seconds", 120);
        conf.setInt("hbase.regionserver.handler.count", 10);
        conf.setInt("hbase.master.info.port", -1);
        conf.setInt("hbase.regionserver.info.port", -1);
        try {
            candidate.startMiniCluster(1);
            return candidate;
        } catch (Exception e) {
            try {
                candidate.shutdownMiniCluster();
            } catch (Exception suppressed) {
                e.addSuppressed(suppressed);
            }
            throw e;
        }
    }

    @Override
    public void close() throws IOException {
        try {
            if (hbase != null) {
                hbase.shutdownMiniCluster();
                hbase = null;
            }
        } finally {
            if (dfs != null) {
                dfs.shutdown();
                dfs = null;
            }
        }
    }
}
