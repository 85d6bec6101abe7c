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

import org.apache.flink.configuration.Configuration;

import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * One real HBase mini cluster (master, region server, ZooKeeper, HDFS) per test class.
 *
 * <p>Starting takes ~20 s on a busy 2-core machine and has once failed with "Master not active",
 * so the waits are raised and a failed start is retried once.
 */
public final class HBaseClusterExtension implements BeforeAllCallback, AfterAllCallback {

    private static final Logger LOG = LoggerFactory.getLogger(HBaseClusterExtension.class);

    private HBaseTestingUtility utility;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        utility = start();
    }

    /** Starts a mini cluster (HDFS, ZooKeeper, master, one region server), retrying once. */
    public static HBaseTestingUtility start() throws Exception {
        try {
            return startOnce();
        } catch (Exception first) {
            LOG.warn("HBase mini cluster did not start, retrying once", first);
            return startOnce();
        }
    }

    private static HBaseTestingUtility startOnce() throws Exception {
        HBaseTestingUtility candidate = new HBaseTestingUtility();
        candidate.getConfiguration().setInt("hbase.master.wait.on.regionservers.timeout", 120_000);
        candidate.getConfiguration().setInt("hbase.master.wait.on.service.seconds", 120);
        candidate.getConfiguration().setInt("hbase.regionserver.handler.count", 10);
        candidate.getConfiguration().setInt("hbase.master.info.port", -1);
        candidate.getConfiguration().setInt("hbase.regionserver.info.port", -1);
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
    public void afterAll(ExtensionContext context) throws Exception {
        if (utility != null) {
            utility.shutdownMiniCluster();
        }
    }

    public HBaseTestingUtility utility() {
        return utility;
    }

    /** The quorum as a client would configure it, e.g. {@code localhost:53124}. */
    public String zookeeperQuorum() {
        return "localhost:" + utility.getZkCluster().getClientPort();
    }

    /** Options of an HBase checkpoint storage on this cluster in {@code table}, salted 4 ways. */
    public Configuration storageOptions(String table) {
        Configuration conf = new Configuration();
        conf.set(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, zookeeperQuorum());
        conf.set(HBaseCheckpointStorageOptions.TABLE, table);
        conf.set(HBaseCheckpointStorageOptions.SALT_BUCKETS, 4);
        return conf;
    }
}
