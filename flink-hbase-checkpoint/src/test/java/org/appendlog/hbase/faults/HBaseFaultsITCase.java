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

package org.appendlog.hbase.faults;

import org.appendlog.hbase.HBaseCheckpointStorage;
import org.appendlog.hbase.HBaseCheckpointStorageFactory;
import org.appendlog.hbase.HBaseCheckpointStorageOptions;
import org.appendlog.hbase.HBaseClusterExtension;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.CheckpointMetadataOutputStream;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.util.InstantiationUtil;

import org.apache.hadoop.hbase.MiniHBaseCluster;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
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
        return storage(options(quorum, table, timeout));
    }

    private static Configuration options(String quorum, String table, Duration timeout) {
        Configuration conf = new Configuration();
        conf.set(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, quorum);
        conf.set(HBaseCheckpointStorageOptions.TABLE, table);
        conf.set(HBaseCheckpointStorageOptions.SALT_BUCKETS, 4);
        conf.set(HBaseCheckpointStorageOptions.CLIENT_TIMEOUT, timeout);
        conf.set(HBaseCheckpointStorageOptions.CLIENT_RETRIES, 3);
        return conf;
    }

    private static HBaseCheckpointStorage storage(Configuration conf) {
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

    /** The pointer of checkpoint {@code id} of the run that wrote {@code pointer}. */
    private static String pointerOf(String pointer, long id) {
        return pointer.substring(0, pointer.lastIndexOf("/chk-")) + "/chk-" + id;
    }

    @Test
    void regionServerKilledAndReplacedDuringACheckpoint() throws Exception {
        String table = "faults_rs";
        HBaseCheckpointStorage storage = storage(HBASE.zookeeperQuorum(), table, Duration.ofSeconds(60));
        CheckpointStorageAccess access = storage.createCheckpointStorage(new JobID());
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
            assertThat(failureOf(() -> storage.resolveCheckpoint(pointerOf(first, 2)).getExternalPointer(), resolveFailure)).isNull();
            assertThat(resolveFailure.toString()).contains(pointerOf(first, 2));
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

    /**
     * A chunk row of a completed checkpoint lost (deleted behind the storage's back): restoring it
     * fails naming the row, whether the row held the start, the middle or the end of a state
     * stream or the metadata, instead of reading a shorter stream. Each stream has four rows of
     * 32 KB, 32 KB, 32 KB and 4 KB; the metadata one.
     */
    @Test
    void aLostChunkRowFailsTheRestoreNamingTheRow() throws Exception {
        String table = "faults_lost_chunk";
        Configuration conf = options(HBASE.zookeeperQuorum(), table, Duration.ofSeconds(60));
        conf.set(HBaseCheckpointStorageOptions.CHUNK_SIZE, MemorySize.parse("32kb"));
        HBaseCheckpointStorage storage = storage(conf);
        CheckpointStorageAccess access = storage.createCheckpointStorage(new JobID());
        access.initializeBaseLocationsForCheckpoint();
        String[] lost = {"its first row", "a middle row", "its last row", "the metadata's only row"};
        long[] offsets = {0, 32 * 1024, 96 * 1024, 0};
        for (int i = 0; i < lost.length; i++) {
            long id = i + 1;
            String pointer = write(access, id, null);
            assertRestoresExactly(storage, pointer, id);
            String stream =
                    i < STREAMS
                            ? ((FileStateHandle) handles(storage, pointer).get(i)).getFilePath().getPath().substring(1)
                            : pointer.substring(pointer.indexOf('/', "hbase://".length()) + 1) + "/_metadata";
            String row = deleteRow(table, stream + "/" + String.format("%016x", offsets[i]));

            StringBuilder failure = new StringBuilder();
            assertThat(failureOf(() -> {
                assertRestoresExactly(storage, pointer, id);
                return "restored";
            }, failure)).isNull();
            assertThat(failure.toString()).contains("'" + row + "'").contains(table);
            RELIABILITY.record(
                    "chunk row deleted from a completed checkpoint: "
                            + lost[i]
                            + (i < STREAMS ? " of a state stream of 100 KB in 32 KB chunks" : ""),
                    "the restore fails naming the row: " + failure);
        }
    }

    /**
     * A chunk size above the client's cell limit ({@code hbase.client.keyvalue.maxsize}, from the
     * site file) fails the storage's start on the job manager, naming both values, before any
     * table is created; not the first checkpoint. A chunk size that fits works with the same file.
     */
    @Test
    void aChunkSizeAboveTheClientsCellLimitFailsTheStart(@TempDir Path dir) throws Exception {
        String table = "faults_cell_limit";
        Path site = dir.resolve("hbase-site.xml");
        Files.writeString(
                site,
                "<?xml version=\"1.0\"?><configuration><property>"
                        + "<name>hbase.client.keyvalue.maxsize</name><value>1048576</value>"
                        + "</property></configuration>");
        Configuration conf = options(HBASE.zookeeperQuorum(), table, Duration.ofSeconds(60));
        conf.set(HBaseCheckpointStorageOptions.SITE_FILE, site.toString());
        CheckpointStorageAccess tooLarge = storage(conf).createCheckpointStorage(new JobID());

        StringBuilder failure = new StringBuilder();
        assertThat(failureOf(() -> {
            tooLarge.initializeBaseLocationsForCheckpoint();
            return "started";
        }, failure)).isNull();
        assertThat(failure.toString())
                .contains("'" + HBaseCheckpointStorageOptions.CHUNK_SIZE.key() + "' is 2097152 bytes")
                .contains("'hbase.client.keyvalue.maxsize' = 1048576 bytes");
        assertThat(HBASE.utility().getAdmin().tableExists(TableName.valueOf(table))).isFalse();

        conf.set(HBaseCheckpointStorageOptions.CHUNK_SIZE, MemorySize.parse("1023kb"));
        HBaseCheckpointStorage fitting = storage(conf);
        CheckpointStorageAccess access = fitting.createCheckpointStorage(new JobID());
        access.initializeBaseLocationsForCheckpoint();
        CheckpointStorageLocation location = access.initializeLocationForCheckpoint(1);
        byte[] state = new byte[3 * 1024 * 1024];
        new Random(7).nextBytes(state);
        CheckpointStateOutputStream out = location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE);
        out.write(state);
        StreamStateHandle handle = out.closeAndGetHandle();
        try (InputStream in = handle.openInputStream()) {
            assertThat(in.readAllBytes()).isEqualTo(state);
        }
        RELIABILITY.record(
                "chunk-size 2 mb (default) with 'hbase.client.keyvalue.maxsize' = 1048576 in the site file",
                "the storage's start on the job manager fails before connecting: " + failure
                        + "; with chunk-size 1023 kb a 3 MB stream is written in full chunks and reads back byte for byte");
    }

    private static List<StreamStateHandle> handles(HBaseCheckpointStorage storage, String pointer) throws Exception {
        try (InputStream in = storage.resolveCheckpoint(pointer).getMetadataHandle().openInputStream()) {
            return InstantiationUtil.deserializeObject(in.readAllBytes(), HBaseFaultsITCase.class.getClassLoader());
        }
    }

    /** Deletes the one row whose key ends with {@code suffix}, with the plain HBase client; returns its key. */
    private static String deleteRow(String table, String suffix) throws Exception {
        List<String> rows = new ArrayList<>();
        try (Table t = HBASE.utility().getConnection().getTable(TableName.valueOf(table));
                ResultScanner scanner = t.getScanner(new Scan().setFilter(new KeyOnlyFilter()))) {
            for (Result result : scanner) {
                String row = Bytes.toString(result.getRow());
                if (row.endsWith("/" + suffix)) {
                    rows.add(row);
                }
            }
            assertThat(rows).as("rows ending with %s", suffix).hasSize(1);
            t.delete(new Delete(Bytes.toBytes(rows.get(0))));
        }
        return rows.get(0);
    }
}
