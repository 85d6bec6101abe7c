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

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.net.ServerSocket;
import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/** A job whose HBase cannot be reached fails to start, saying where it looked, instead of hanging. */
class HBaseUnreachableQuorumITCase {

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(1)
                            .build());

    @Test
    void unreachableQuorumFailsTheJobStartNamingTheQuorum() throws Exception {
        String quorum = "127.0.0.1:" + closedPort();
        Configuration conf = new Configuration();
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, HBaseCheckpointStorageFactory.class.getName());
        conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(200));
        conf.set(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, quorum);
        conf.set(HBaseCheckpointStorageOptions.CLIENT_TIMEOUT, Duration.ofSeconds(5));
        conf.set(HBaseCheckpointStorageOptions.CLIENT_RETRIES, 1);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        CountingJob.build(env, 100, 100, 0);

        long start = System.nanoTime();
        // Bounded by the configured client timeout; the generous limit only catches a hang.
        assertTimeoutPreemptively(
                Duration.ofSeconds(90),
                () ->
                        assertThatThrownBy(() -> env.execute("unreachable hbase"))
                                .hasStackTraceContaining("ZooKeeper quorum '" + quorum + "'")
                                .hasStackTraceContaining(HBaseCheckpointStorageOptions.CLIENT_TIMEOUT.key()));
        assertThat(Duration.ofNanos(System.nanoTime() - start)).isLessThan(Duration.ofSeconds(90));
    }

    private static int closedPort() throws Exception {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
