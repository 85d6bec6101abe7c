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

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.File;
import java.io.Serializable;
import java.time.Duration;
import java.util.Objects;

/**
 * How to reach one HBase cluster. Serializable so that it travels with the checkpoint storage,
 * and a value (equals/hashCode) so that equal settings share one connection per process.
 */
final class HBaseClientSettings implements Serializable {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(HBaseClientSettings.class);
    /** HBase's default cell-block codec ({@code AbstractRpcClient#getDefaultCodec}); empty: none. */
    static final String DEFAULT_RPC_CODEC_KEY = "hbase.client.default.rpc.codec";

    @Nullable private final String zookeeperQuorum;
    @Nullable private final String siteFile;
    private final int retries;
    private final Duration timeout;

    HBaseClientSettings(
            @Nullable String zookeeperQuorum,
            @Nullable String siteFile,
            int retries,
            Duration timeout) {
        this.zookeeperQuorum = zookeeperQuorum;
        this.siteFile = siteFile;
        this.retries = retries;
        this.timeout = timeout;
    }

    /** The HBase client configuration: hbase-default/site from the classpath, the site file, then our options. */
    Configuration toHBaseConfiguration() {
        Configuration conf = HBaseConfiguration.create();
        // Cells travel inside the protobuf messages rather than as cell blocks: the region server
        // instantiates a cell-block codec by the class name the client sends, and the flink-lib jar
        // relocates that class. A site file may still name a codec (hbase.client.rpc.codec).
        conf.set(DEFAULT_RPC_CODEC_KEY, "");
        if (siteFile != null) {
            org.apache.hadoop.fs.Path site = new org.apache.hadoop.fs.Path(siteFile);
            // Hadoop skips a missing resource without a word.
            if (!new File(site.toUri().getPath()).isFile()) {
                LOG.warn(
                        "The HBase site file {} ('{}') is not a file on this machine; the HBase"
                                + " client goes without it, to ZooKeeper quorum {}",
                        siteFile,
                        HBaseCheckpointStorageOptions.SITE_FILE.key(),
                        zookeeperQuorum != null
                                ? zookeeperQuorum
                                : conf.get(HConstants.ZOOKEEPER_QUORUM));
            }
            conf.addResource(site);
        }
        if (zookeeperQuorum != null) {
            conf.set(HConstants.ZOOKEEPER_QUORUM, zookeeperQuorum);
        }
        long timeoutMillis = timeout.toMillis();
        conf.setInt(HConstants.HBASE_CLIENT_RETRIES_NUMBER, retries);
        conf.setLong(HConstants.HBASE_CLIENT_OPERATION_TIMEOUT, timeoutMillis);
        conf.setLong(HConstants.HBASE_CLIENT_META_OPERATION_TIMEOUT, timeoutMillis);
        // One RPC must not use up the whole operation budget, or retries never happen.
        conf.setLong(HConstants.HBASE_RPC_TIMEOUT_KEY, Math.max(1000, timeoutMillis / 3));
        // ZooKeeper lookups retry on their own schedule (30 x 1 s by default); keep them inside
        // the same budget so an unreachable quorum does not keep client threads busy for long.
        conf.setInt("zookeeper.recovery.retry", Math.max(1, Math.min(retries, 3)));
        return conf;
    }

    /** The quorum the client will actually use, for error messages. */
    String effectiveQuorum() {
        if (zookeeperQuorum != null) {
            return zookeeperQuorum;
        }
        return toHBaseConfiguration().get(HConstants.ZOOKEEPER_QUORUM) + " (from " + siteFile + ")";
    }

    Duration timeout() {
        return timeout;
    }

    @Override
    public boolean equals(Object o) {
        if (this == o) {
            return true;
        }
        if (!(o instanceof HBaseClientSettings)) {
            return false;
        }
        HBaseClientSettings that = (HBaseClientSettings) o;
        return retries == that.retries
                && Objects.equals(zookeeperQuorum, that.zookeeperQuorum)
                && Objects.equals(siteFile, that.siteFile)
                && timeout.equals(that.timeout);
    }

    @Override
    public int hashCode() {
        return Objects.hash(zookeeperQuorum, siteFile, retries, timeout);
    }

    @Override
    public String toString() {
        return "HBase at ZooKeeper quorum '"
                + effectiveQuorum()
                + "'"
                + (siteFile == null ? "" : ", site file " + siteFile);
    }
}
