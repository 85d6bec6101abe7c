package org.appendlog.hbase.faults;

import org.appendlog.hbase.HBaseCheckpointStorage;
import org.appendlog.hbase.HBaseCheckpointStorageFactory;
import org.appendlog.hbase.HBaseCheckpointStorageOptions;
import org.appendlog.hbase.HBaseClusterExtension;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.CheckpointMetadataOutputStream;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.util.InstantiationUtil;

import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.TableName;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.InputStream;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.junit.jupiter.api.Assertions.assertTimeoutPreemptively;

/**
 * Checkpoints written through the HBase storage API (as tasks and the job manager write them:
 * state streams, then {@code _metadata}) while the region server is killed and replaced, or while
 * the ZooKeeper quorum is unreachable. Every completed checkpoint must restore byte for byte
 * through its pointer; one that did not complete must not resolve, with an error naming it.
 */
class HBaseFaultsITCase {

    @RegisterExtension static final HBaseClusterExtension HBASE = new HBaseClusterExtension();

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("hbase-faults");
    private static final int STREAMS = 3;
    private static final int STREAM_BYTES = 100 * 1024;

    /** What a hook does between the first state stream of a checkpoint and the rest. */
    @FunctionalInterface
    interface Hook {
        void run() throws Exception;
    }

    private static HBaseCheckpointStorage storage(String quorum, String table, Duration timeout) {
        Configuration conf = new Configuration();
        conf.set(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, quorum);
        conf.set(HBaseCheckpointStorageOptions.TABLE, table);
        conf.set(HBaseCheckpointStorageOptions.SALT_BUCKETS, 4);
        conf.set(HBaseCheckpointStorageOptions.CLIENT_TIMEOUT, timeout);
        conf.set(HBaseCheckpointStorageOptions.CLIENT_RETRIES, 3);
        return new HBaseCheckpointStorageFactory().createFromConfig(conf, HBaseFaultsITCase.class.getClassLoader());
    }

    private static byte[] bytes(long checkpoint, int stream) {
        byte[] b = new byte[STREAM_BYTES];
        new Random(checkpoint * 31 + stream).nextBytes(b);
        return b;
    }

    /** Writes checkpoint {@code id}, running {@code hook} after its first stream; returns its pointer. */
    private static String write(CheckpointStorageAccess access, long id, Hook hook) throws Exception {
        CheckpointStorageLocation location = access.initializeLocationForCheckpoint(id);
        ArrayList<StreamStateHandle> handles = new ArrayList<>();
        for (int i = 0; i < STREAMS; i++) {
            CheckpointStateOutputStream out =
                    location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE);
            out.write(bytes(id, i));
            handles.add(out.closeAndGetHandle());
            if (i == 0 && hook != null) {
                hook.run();
            }
        }
        try (CheckpointMetadataOutputStream out = location.createMetadataOutputStream()) {
            out.write(InstantiationUtil.serializeObject(handles));
            return out.closeAndFinalizeCheckpoint().getExternalPointer();
        }
    }

    /** Resolves {@code pointer} and checks every stream of checkpoint {@code id} byte for byte. */
    private static void assertRestoresExactly(HBaseCheckpointStorage storage, String pointer, long id)
            throws Exception {
        CompletedCheckpointStorageLocation resolved = storage.resolveCheckpoint(pointer);
        List<StreamStateHandle> handles;
        try (InputStream in = resolved.getMetadataHandle().openInputStream()) {
            handles = InstantiationUtil.deserializeObject(in.readAllBytes(), HBaseFaultsITCase.class.getClassLoader());
        }
        assertThat(handles).hasSize(STREAMS);
        for (int i = 0; i < STREAMS; i++) {
            try (InputStream in = handles.get(i).openInputStream()) {
                assertThat(in.readAllBytes()).as("stream %d of checkpoint %d", i, id).isEqualTo(bytes(id, i));
            }
        }
    }

    private static String failureOf(ThrowingSupplier<String> action, StringBuilder failure) {
        try {
            return action.get();
        } catch (Throwable t) {
            for (Throwable c = t; c != null; c = c.getCause()) {
                failure.append(failure.length() == 0 ? "" : " <- ").append(c.getClass().getSimpleName()).append(": ").append(c.getMessage());
            }
            return null;
        }
    }

    @FunctionalInterface
    interface ThrowingSupplier<T> {
        T get() throws Exception;
    }

    /** The pointer of checkpoint {@code id} of {@code job}, whether or not it completed. */
    private static String pointerOf(String table, JobID job, long id) {
        return "hbase://" + table + "/" + job + "/chk-" + id;
    }

    @Test
    void regionServerKilledAndReplacedDuringACheckpoint() throws Exception {
        String table = "faults_rs";
        HBaseCheckpointStorage storage = storage(HBASE.zookeeperQuorum(), table, Duration.ofSeconds(60));
        JobID job = new JobID();
        CheckpointStorageAccess access = storage.createCheckpointStorage(job);
        access.initializeBaseLocationsForCheckpoint();
        String first = write(access, 1, null);

        MiniHBaseCluster cluster = HBASE.utility().getMiniHBaseCluster();
        Thread replacement = new Thread(() -> {
            try {
                Thread.sleep(2_000);
                cluster.startRegionServer();
            } catch (Exception e) {
                throw new RuntimeException(e);
            }
        }, "replacement-region-server");
        StringBuilder failure = new StringBuilder();
        String second =
                assertTimeoutPreemptively(
                        Duration.ofSeconds(180),
                        () -> failureOf(() -> write(access, 2, () -> {
                            // Crash, not a clean stop: regions come back only by WAL replay.
                            cluster.abortRegionServer(0);
                            cluster.waitOnRegionServer(0);
                            replacement.start();
                        }), failure));
        replacement.join();
        HBASE.utility().waitTableAvailable(TableName.valueOf(table), 120_000);

        assertRestoresExactly(storage, first, 1);
        String outcome;
        if (second != null) {
            assertRestoresExactly(storage, second, 2);
            outcome = "checkpoint 2 completed (the client waited for the regions to move); checkpoints 1 and 2 restore byte for byte";
        } else {
            StringBuilder resolveFailure = new StringBuilder();
            assertThat(failureOf(() -> storage.resolveCheckpoint(pointerOf(table, job, 2)).getExternalPointer(), resolveFailure)).isNull();
            assertThat(resolveFailure.toString()).contains(pointerOf(table, job, 2));
            outcome = "checkpoint 2 failed (" + failure + "); checkpoint 1 restores byte for byte; checkpoint 2 does not resolve: " + resolveFailure;
        }
        String third = write(access, 3, null);
        assertRestoresExactly(storage, third, 3);
        RELIABILITY.record(
                "region server aborted after the first state stream of checkpoint 2, a new one started 2 s later (SYNC_WAL)",
                outcome + "; checkpoint 3 completes and restores byte for byte");
    }

    @Test
    void quorumUnreachableDuringACheckpoint() throws Exception {
        String table = "faults_zk";
        try (TcpProxy zookeeper = new TcpProxy(HBASE.utility().getZkCluster().getClientPort())) {
            String quorum = "localhost:" + zookeeper.start();
            HBaseCheckpointStorage storage = storage(quorum, table, Duration.ofSeconds(5));
            JobID job = new JobID();
            CheckpointStorageAccess access = storage.createCheckpointStorage(job);
            access.initializeBaseLocationsForCheckpoint();
            String first = write(access, 1, null);

            StringBuilder failure = new StringBuilder();
            String second =
                    assertTimeoutPreemptively(
                            Duration.ofSeconds(120),
                            () -> failureOf(() -> write(access, 2, zookeeper::stop), failure));
            StringBuilder unreachableRestore = new StringBuilder();
            String resolvedWhileDown =
                    assertTimeoutPreemptively(
                            Duration.ofSeconds(120),
                            () -> failureOf(() -> {
                                assertRestoresExactly(storage, first, 1);
                                return "ok";
                            }, unreachableRestore));

            // A process that connects only now (a new task manager) cannot find the cluster.
            StringBuilder newConnection = new StringBuilder();
            String connectedWhileDown =
                    assertTimeoutPreemptively(
                            Duration.ofSeconds(120),
                            () -> failureOf(() -> {
                                HBaseCheckpointStorage late = storage(quorum, "faults_zk_late", Duration.ofSeconds(5));
                                CheckpointStorageAccess lateAccess = late.createCheckpointStorage(new JobID());
                                lateAccess.initializeBaseLocationsForCheckpoint();
                                return write(lateAccess, 1, null);
                            }, newConnection));
            assertThat(connectedWhileDown).isNull();
            assertThat(newConnection.toString()).contains(quorum);

            zookeeper.start();
            assertRestoresExactly(storage, first, 1);
            String outcome;
            if (second != null) {
                assertRestoresExactly(storage, second, 2);
                outcome = "checkpoint 2 completed (the client reaches region servers without ZooKeeper once it knows the regions)";
            } else {
                outcome = "checkpoint 2 failed (" + failure + ")";
            }
            String third = write(access, 3, null);
            assertRestoresExactly(storage, third, 3);
            RELIABILITY.record(
                    "ZooKeeper quorum unreachable (every connection cut) after the first state stream of checkpoint 2",
                    outcome
                            + "; restoring checkpoint 1 while the quorum is down "
                            + (resolvedWhileDown != null ? "works byte for byte" : "fails: " + unreachableRestore)
                            + "; a storage connecting only now fails: " + newConnection
                            + "; with the quorum back, checkpoint 1 restores byte for byte and checkpoint 3 completes and restores byte for byte");
        }
    }
}
