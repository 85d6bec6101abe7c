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

package org.appendlog.statebackend.faults;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.faults.Fault.Op;
import org.appendlog.statebackend.faults.FaultHarness.Completed;

import org.appendlog.testing.MiniHdfs;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.util.concurrent.RunnableFuture;

/**
 * The log and the checkpoints on a real HDFS ({@code MiniDFSCluster}, one NameNode, one
 * DataNode); the only DataNode is restarted (or stopped until the checkpoint is over) in the
 * middle of checkpoint 3, at the moment the backend writes or syncs its batch or writes the
 * manifest. Checkpoint 3 may fail or succeed; every completed checkpoint must restore exactly.
 */
class DataNodeRestartTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("hdfs-datanode");

    @TempDir static Path base;
    private static MiniHdfs hdfs;
    private static int run;

    /** When, and how, the DataNode goes away. */
    enum Moment {
        RESTART_BEFORE_BATCH_WRITE(Op.WRITE, ".seg", true),
        RESTART_BEFORE_BATCH_SYNC(Op.SYNC, ".seg", true),
        STOPPED_BEFORE_BATCH_SYNC(Op.SYNC, ".seg", false),
        RESTART_BEFORE_MANIFEST_CREATE(Op.CREATE, "/chk/", true);

        final Op op;
        final String path;
        final boolean restartAtOnce;

        Moment(Op op, String path, boolean restartAtOnce) {
            this.op = op;
            this.path = path;
            this.restartAtOnce = restartAtOnce;
        }

        @Override
        public String toString() {
            return (restartAtOnce ? "DataNode restarted" : "DataNode stopped (restarted after the checkpoint)")
                    + " before " + op.name().toLowerCase() + " of the "
                    + (path.equals(".seg") ? "batch" : "manifest");
        }
    }

    @BeforeAll
    static void startHdfs() throws Exception {
        org.apache.hadoop.conf.Configuration conf = new org.apache.hadoop.conf.Configuration();
        // Fail fast instead of retrying for minutes while the only DataNode is away.
        conf.setInt("dfs.client.block.write.locateFollowingBlock.retries", 2);
        conf.setInt("ipc.client.connect.max.retries", 2);
        hdfs = new MiniHdfs(base.resolve("hdfs"), conf);
        FaultyFileSystem.delegateTo(hdfs.root());
    }

    @AfterAll
    static void stopHdfs() {
        FaultyFileSystem.delegateTo("file://");
        if (hdfs != null) {
            hdfs.close();
        }
    }

    /** Each case starts with the DataNode up, whatever the case before it left. */
    @AfterEach
    void disarmAndStartTheDataNode() throws Exception {
        Fault.disarm();
        hdfs.startDataNode();
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Moment.class)
    void aDataNodeRestartDuringACheckpoint(Moment moment) throws Exception {
        String root = "faulty:///run-" + (++run);
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, root + "/log");
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        AppendLogStateBackend stateBackend = new AppendLogStateBackend().configure(config, getClass().getClassLoader());
        String checkpoints = root + "/checkpoints";

        Fault fault =
                Fault.callback(
                        moment.op,
                        moment.path,
                        1,
                        moment.restartAtOnce ? hdfs::restartDataNode : hdfs::stopDataNode);
        try (FaultHarness writer = FaultHarness.open(stateBackend, checkpoints)) {
            for (int key = 0; key < 500; key++) {
                writer.put(key, key);
            }
            writer.checkpoint(1);
            for (int key = 0; key < 100; key++) {
                writer.put(key, 2000 + key);
            }
            Completed second = writer.checkpoint(2);
            for (int key = 100; key < 200; key++) {
                writer.put(key, 3000 + key);
            }
            writer.remove(450);

            Fault.arm(fault);
            RunnableFuture<SnapshotResult<KeyedStateHandle>> third = writer.snapshot(3);
            third.run();
            Fault.disarm();
            hdfs.startDataNode();
            org.assertj.core.api.Assertions.assertThat(fault.hasFired()).isTrue();
            String failure = FaultHarness.failureOf(third);
            Completed last = failure == null ? writer.complete(3, third.get()) : second;

            FaultHarness.assertRestoresExactly(stateBackend, checkpoints, last);
            // The writer may learn only now that its open segment's pipeline broke: that
            // checkpoint fails, and the one after it opens a new segment.
            writer.put(499, 4499);
            RunnableFuture<SnapshotResult<KeyedStateHandle>> fourth = writer.snapshot(4);
            fourth.run();
            String fourthFailure = FaultHarness.failureOf(fourth);
            Completed next =
                    fourthFailure == null ? writer.complete(4, fourth.get()) : writer.checkpoint(5);
            FaultHarness.assertRestoresExactly(stateBackend, checkpoints, next);
            RELIABILITY.record(
                    moment.toString() + " of checkpoint 3",
                    (failure == null ? "checkpoint 3 completed" : "checkpoint 3 failed")
                            + "; checkpoint " + last.id + " restores exactly"
                            + (fourthFailure == null
                                    ? "; the next checkpoint completes and restores exactly"
                                    : "; the next checkpoint fails (the writer's broken stream), the one after it completes and restores exactly")
                            + (failure == null ? "" : ". Error: " + failure));
        }
    }
}
