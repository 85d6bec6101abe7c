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

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.CheckpointMetadataOutputStream;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeOffsets;
import org.apache.flink.runtime.state.KeyGroupsStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;
import org.apache.flink.runtime.testutils.CommonTestUtils;

import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.util.Bytes;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import java.io.DataInputStream;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InputStream;
import java.lang.management.ManagementFactory;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicReference;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The storage's streams, metadata and discards against a real HBase, without a Flink job. */
class HBaseCheckpointStreamsITCase {

    @RegisterExtension static final HBaseClusterExtension HBASE = new HBaseClusterExtension();

    private static final String TABLE = "streams_it";
    private static final int MB = 1024 * 1024;

    private static Connection connection;

    @BeforeAll
    static void connect() throws IOException {
        connection = HBASE.utility().getConnection();
    }

    private static HBaseCheckpointStorage storage(Configuration extra) {
        Configuration conf = HBASE.storageOptions(TABLE);
        conf.addAll(extra);
        return new HBaseCheckpointStorageFactory()
                .createFromConfig(conf, HBaseCheckpointStreamsITCase.class.getClassLoader());
    }

    private static CheckpointStorageAccess access(JobID job) throws IOException {
        return access(storage(new Configuration()), job);
    }

    private static CheckpointStorageAccess access(HBaseCheckpointStorage storage, JobID job)
            throws IOException {
        CheckpointStorageAccess access = storage.createCheckpointStorage(job);
        access.initializeBaseLocationsForCheckpoint();
        return access;
    }

    /** Streams cut into rows of {@code chunkSize}, none kept inline. */
    private static Configuration rowsOf(String chunkSize) {
        Configuration conf = new Configuration();
        conf.set(HBaseCheckpointStorageOptions.CHUNK_SIZE, MemorySize.parse(chunkSize));
        conf.set(HBaseCheckpointStorageOptions.INLINE_THRESHOLD, MemorySize.parse("0b"));
        return conf;
    }

    private static byte[] randomBytes(int size, long seed) {
        byte[] bytes = new byte[size];
        new Random(seed).nextBytes(bytes);
        return bytes;
    }

    /** Writes in uneven pieces, as serializers do, so chunk boundaries fall mid-write. */
    private static StreamStateHandle write(CheckpointStateOutputStream out, byte[] bytes)
            throws IOException {
        int offset = 0;
        int piece = 1;
        while (offset < bytes.length) {
            if (piece == 1) {
                out.write(bytes[offset++]);
            } else {
                int n = Math.min(piece, bytes.length - offset);
                out.write(bytes, offset, n);
                offset += n;
            }
            piece = piece * 7 % 100_003 + 1;
        }
        assertThat(out.getPos()).isEqualTo(bytes.length);
        return out.closeAndGetHandle();
    }

    private static byte[] readAll(StreamStateHandle handle) throws IOException {
        try (InputStream in = handle.openInputStream()) {
            return in.readAllBytes();
        }
    }

    @Test
    void streamOver25MegabytesRoundTripsByteForByte() throws Exception {
        JobID job = new JobID();
        CheckpointStorageLocation location = access(job).initializeLocationForCheckpoint(1);
        byte[] original = randomBytes(25 * MB, 42);

        StreamStateHandle handle =
                write(location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE), original);

        assertThat(handle).isInstanceOf(FileStateHandle.class);
        assertThat(handle.getStateSize()).isEqualTo(original.length);
        assertThat(((FileStateHandle) handle).getFilePath().toString())
                .matches("hbase://" + TABLE + "/" + job + "/run-[0-9a-f]{16}/chk-1/.*")
                .startsWith(location + "/");
        // 25 MB in the default 2 MB chunks: 13 cells, each far below HBase's 10 MB cell limit,
        // and the row of the stream's length.
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).hasSize(14);
        assertThat(readAll(handle)).isEqualTo(original);

        // Restores seek to key-group offsets: positions inside, at and across chunk borders.
        try (FSDataInputStream in = handle.openInputStream()) {
            for (long position : new long[] {20 * MB + 17, 2 * MB, 2 * MB - 3, 5, 25L * MB - 1}) {
                in.seek(position);
                byte[] actual = new byte[(int) Math.min(10, original.length - position)];
                new DataInputStream(in).readFully(actual);
                assertThat(actual)
                        .as("bytes at %d", position)
                        .isEqualTo(Arrays.copyOfRange(original, (int) position, (int) position + actual.length));
            }
            in.seek(original.length);
            assertThat(in.read()).isEqualTo(-1);
        }

        handle.discardState();
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).isEmpty();
    }

    @Test
    void tableIsPreSplitPerSaltBucketAndACheckpointsStreamsSpreadOverThem() throws Exception {
        JobID job = new JobID();
        CheckpointStorageLocation location = access(job).initializeLocationForCheckpoint(2);
        for (int stream = 0; stream < 16; stream++) {
            write(location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE), randomBytes(64 * 1024, stream));
        }

        TableName table = TableName.valueOf(TABLE);
        assertThat(HBASE.utility().getAdmin().getRegions(table)).hasSize(4);
        assertThat(HBASE.utility().getAdmin().getDescriptor(table).getColumnFamily(Bytes.toBytes("s")).getMaxVersions())
                .isEqualTo(1);
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString()).stream()
                        .map(row -> row.substring(0, row.indexOf('/')))
                        .distinct())
                .hasSizeGreaterThan(1)
                .allMatch(salt -> salt.matches("0[0-3]"));
    }

    @Test
    void streamsUpToTheInlineThresholdStayInTheMetadata() throws Exception {
        JobID job = new JobID();
        CheckpointStorageLocation location = access(job).initializeLocationForCheckpoint(3);
        byte[] small = randomBytes(20 * 1024, 7);

        StreamStateHandle handle =
                write(location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE), small);

        assertThat(handle).isInstanceOf(ByteStreamStateHandle.class);
        assertThat(readAll(handle)).isEqualTo(small);
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).isEmpty();

        StreamStateHandle justOver =
                write(
                        location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE),
                        randomBytes(20 * 1024 + 1, 8));
        assertThat(justOver).isInstanceOf(FileStateHandle.class);

        // As Flink's file streams: a stream with nothing written has no state.
        assertThat(
                        location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE)
                                .closeAndGetHandle())
                .isNull();
    }

    @Test
    void metadataRoundTripsThroughFlinksSerializerAndDiscardDeletesEveryRow() throws Exception {
        JobID job = new JobID();
        HBaseCheckpointStorage storage = storage(new Configuration());
        CheckpointStorageLocation location = access(storage, job).initializeLocationForCheckpoint(5);
        byte[] state = randomBytes(3 * MB, 5);
        StreamStateHandle stream =
                write(location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE), state);
        KeyGroupsStateHandle keyed =
                new KeyGroupsStateHandle(
                        new KeyGroupRangeOffsets(KeyGroupRange.of(0, 1), new long[] {0, MB}), stream);
        OperatorID operator = new OperatorID();
        OperatorState operatorState = new OperatorState(operator, 1, 2);
        operatorState.putState(
                0, OperatorSubtaskState.builder().setManagedKeyedState(keyed).build());

        String pointer;
        try (CheckpointMetadataOutputStream out = location.createMetadataOutputStream()) {
            Checkpoints.storeCheckpointMetadata(
                    new CheckpointMetadata(5, Collections.singletonList(operatorState), Collections.emptyList()),
                    out);
            pointer = out.closeAndFinalizeCheckpoint().getExternalPointer();
        }
        assertThat(pointer)
                .isEqualTo(location.toString())
                .matches("hbase://" + TABLE + "/" + job + "/run-[0-9a-f]{16}/chk-5");

        // As a job restoring from the pointer would: resolve it, read the metadata with Flink's
        // own deserializer, then read the state through the handle that came out of it.
        CompletedCheckpointStorageLocation resolved = storage.resolveCheckpoint(pointer);
        CheckpointMetadata metadata;
        try (DataInputStream in = new DataInputStream(resolved.getMetadataHandle().openInputStream())) {
            metadata = Checkpoints.loadCheckpointMetadata(in, getClass().getClassLoader(), pointer);
        }
        KeyedStateHandle restored =
                metadata.getOperatorStates().iterator().next().getState(0).getManagedKeyedState().iterator().next();
        StreamStateHandle restoredStream = ((KeyGroupsStateHandle) restored).getDelegateStateHandle();
        assertThat(restoredStream).isEqualTo(stream);
        try (FSDataInputStream in = ((KeyGroupsStateHandle) restored).openInputStream()) {
            in.seek(((KeyGroupsStateHandle) restored).getOffsetForKeyGroup(1));
            byte[] keyGroupOne = new byte[MB];
            new DataInputStream(in).readFully(keyGroupOne);
            assertThat(keyGroupOne).isEqualTo(Arrays.copyOfRange(state, MB, 2 * MB));
        }

        // Discard as Flink's CompletedCheckpoint does: state first, then metadata and location.
        restored.discardState();
        assertThat(TableRows.rowsContaining(connection, TABLE, TableRows.directoryOf(pointer)))
                .allMatch(row -> row.contains("/_metadata/"));
        resolved.disposeStorageLocation();
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).isEmpty();
        assertThatThrownBy(() -> storage.resolveCheckpoint(pointer))
                .isInstanceOf(FileNotFoundException.class)
                .hasMessageContaining(pointer);
    }

    /**
     * The JMX metrics of a table count what HBase acknowledged: the rows a scan finds, their
     * bytes, and the rows a discard deleted.
     */
    @Test
    void jmxMetricsCountTheRowsHBaseHoldsAndTheRowsDeleted() throws Exception {
        String table = "metrics_it";
        Configuration conf = HBASE.storageOptions(table);
        conf.addAll(rowsOf("1mb"));
        HBaseCheckpointStorage storage =
                new HBaseCheckpointStorageFactory().createFromConfig(conf, getClass().getClassLoader());
        JobID job = new JobID();
        CheckpointStorageLocation location = access(storage, job).initializeLocationForCheckpoint(1);
        StreamStateHandle stream =
                write(
                        location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE),
                        randomBytes(3 * MB + 17, 1));

        List<String> rows = TableRows.rowsContaining(connection, table, job.toString());
        MBeanServer jmx = ManagementFactory.getPlatformMBeanServer();
        ObjectName name = CheckpointTableMetrics.name(table);
        assertThat(rows).hasSize(5); // four chunks and the length row
        assertThat(jmx.getAttribute(name, "RowsWritten")).isEqualTo((long) rows.size());
        assertThat(jmx.getAttribute(name, "BytesWritten")).isEqualTo(3L * MB + 17 + Long.BYTES);
        assertThat(jmx.getAttribute(name, "FailedPuts")).isEqualTo(0L);
        assertThat((Long) jmx.getAttribute(name, "PutFlushes")).isPositive();
        assertThat((Double) jmx.getAttribute(name, "PutLatencyMillisMean")).isPositive();

        stream.discardState();
        assertThat(TableRows.rowsContaining(connection, table, job.toString())).isEmpty();
        assertThat(jmx.getAttribute(name, "RowsDeleted")).isEqualTo((long) rows.size());
    }

    /**
     * Flink discards what a cancelled upload wrote from the thread it interrupted (RocksDB's
     * uploader does): the rows must go all the same, and the interrupt must stay set.
     */
    @Test
    void discardOnAnInterruptedThreadDeletesTheRowsAndKeepsTheInterrupt() throws Exception {
        JobID job = new JobID();
        CheckpointStorageLocation location = access(job).initializeLocationForCheckpoint(3);
        StreamStateHandle stream =
                write(
                        location.createCheckpointStateOutputStream(CheckpointedStateScope.SHARED),
                        randomBytes(3 * MB, 3));
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).isNotEmpty();
        Thread.currentThread().interrupt();
        try {
            stream.discardState();
            assertThat(Thread.currentThread().isInterrupted()).isTrue();
        } finally {
            Thread.interrupted();
        }
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).isEmpty();
    }

    /**
     * A cancelled upload closes its unfinished stream on the thread the cancellation interrupted:
     * the writer's flush gives up, and the rows already sent must go all the same.
     */
    @Test
    void closingAnAbandonedStreamOnAnInterruptedThreadDeletesItsRows() throws Exception {
        JobID job = new JobID();
        CheckpointStorageLocation location = access(job).initializeLocationForCheckpoint(3);
        CheckpointStateOutputStream out =
                location.createCheckpointStateOutputStream(CheckpointedStateScope.SHARED);
        // A chunk in HBase, one handed to the client's write buffer, one being filled.
        out.write(randomBytes(3 * MB, 5));
        out.sync();
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).isNotEmpty();
        out.write(randomBytes(2 * MB, 6));
        Thread.currentThread().interrupt();
        boolean interruptKept;
        try {
            out.close();
            interruptKept = Thread.currentThread().isInterrupted();
        } finally {
            Thread.interrupted();
        }
        assertThat(interruptKept).isTrue();
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).isEmpty();
    }

    /**
     * A cancelled checkpoint closes its streams from another thread than the one writing them (the
     * snapshot's closeable registry): chunks the writer still sends must not land after the delete.
     * One write call of 2 MB in 4 KB chunks, each sent at once, is closed once some rows are in.
     */
    @Test
    void streamClosedWhileAnotherThreadWritesItLeavesNoRows() throws Exception {
        JobID job = new JobID();
        Configuration smallChunks = rowsOf("4kb");
        smallChunks.set(HBaseCheckpointStorageOptions.WRITE_BUFFER_SIZE, MemorySize.parse("1kb"));
        CheckpointStateOutputStream out =
                access(storage(smallChunks), job)
                        .initializeLocationForCheckpoint(6)
                        .createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE);
        AtomicReference<Throwable> writeFailure = new AtomicReference<>();
        Thread writer =
                new Thread(
                        () -> {
                            try {
                                out.write(randomBytes(2 * MB, 6));
                                out.closeAndGetHandle();
                            } catch (Throwable t) {
                                writeFailure.set(t);
                            }
                        });
        writer.start();
        CommonTestUtils.waitUntilCondition(
                () -> TableRows.rowsContaining(connection, TABLE, job.toString()).size() >= 5,
                10L,
                3_000);
        out.close();
        writer.join();

        assertThat(writeFailure.get())
                .as("the writer learns that its stream is gone")
                .isInstanceOf(IOException.class);
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).isEmpty();
    }

    /**
     * A task's cancellation interrupts a discarding thread again while it deletes (in a job test,
     * RocksDB's shared rows were left behind for good): the delete starts over and finishes.
     */
    @Test
    void discardInterruptedWhileDeletingStillDeletesEveryRow() throws Exception {
        JobID job = new JobID();
        CheckpointStorageLocation location =
                access(storage(rowsOf("1b")), job).initializeLocationForCheckpoint(4);
        // 8000 rows: deleting them takes several scanner and delete calls.
        StreamStateHandle stream =
                write(
                        location.createCheckpointStateOutputStream(CheckpointedStateScope.SHARED),
                        randomBytes(8000, 4));
        // And the row of the stream's length.
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).hasSize(8001);

        Thread discarding = Thread.currentThread();
        AtomicBoolean discarded = new AtomicBoolean();
        Thread canceller =
                new Thread(
                        () -> {
                            for (int i = 0; i < 5 && !discarded.get(); i++) {
                                discarding.interrupt();
                                try {
                                    Thread.sleep(15);
                                } catch (InterruptedException e) {
                                    return;
                                }
                            }
                        });
        canceller.start();
        boolean interruptKept;
        try {
            stream.discardState();
            interruptKept = Thread.currentThread().isInterrupted();
        } finally {
            discarded.set(true);
            joinIgnoringInterrupts(canceller);
        }
        assertThat(interruptKept).isTrue();
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).isEmpty();
    }

    /** Joins {@code thread}, which may still interrupt this one, and clears what it set. */
    private static void joinIgnoringInterrupts(Thread thread) {
        while (thread.isAlive()) {
            try {
                thread.join();
            } catch (InterruptedException e) {
                // From the thread joined, not a request to stop.
            }
        }
        Thread.interrupted();
    }

    @Test
    void abandonedStreamsAndFailedCheckpointsLeaveNoRowsButSharedStateStays() throws Exception {
        JobID job = new JobID();
        CheckpointStorageAccess access = access(job);
        CheckpointStorageLocation location = access.initializeLocationForCheckpoint(9);

        CheckpointStateOutputStream abandoned =
                location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE);
        abandoned.write(randomBytes(5 * MB, 1));
        abandoned.close();
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).isEmpty();

        StreamStateHandle exclusive =
                write(location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE), randomBytes(MB, 2));
        StreamStateHandle shared =
                write(location.createCheckpointStateOutputStream(CheckpointedStateScope.SHARED), randomBytes(MB, 3));
        StreamStateHandle taskOwned = write(access.createTaskOwnedStateStream(), randomBytes(MB, 4));
        // A chunk and a length row each.
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).hasSize(6);

        location.disposeOnFailure();

        assertThat(TableRows.rowsContaining(connection, TABLE, TableRows.directoryOf(location))).isEmpty();
        assertThat(readAll(shared)).isEqualTo(randomBytes(MB, 3));
        assertThat(readAll(taskOwned)).isEqualTo(randomBytes(MB, 4));
        assertThatThrownBy(() -> readAll(exclusive)).isInstanceOf(IOException.class);
    }

    /**
     * A failover deletes the pending checkpoint's rows while the cancelled tasks wind down; a
     * snapshot that ends just then still writes its streams, and Flink drops the result without
     * discarding it. The job manager's next discard of a completed checkpoint deletes them, and
     * nothing of the checkpoints still retained. The late stream comes through another access to
     * the same job, as a task manager's.
     */
    @Test
    void rowsWrittenIntoAFailedCheckpointAfterItsDisposalGoWithTheNextDiscard() throws Exception {
        JobID job = new JobID();
        CheckpointStorageAccess jobManager = access(job);
        CheckpointStorageAccess taskManager = access(job);
        CompletedCheckpointStorageLocation completed = complete(jobManager, 6);
        CheckpointStorageLocation failed = jobManager.initializeLocationForCheckpoint(7);
        failed.disposeOnFailure();
        CheckpointStreamFactory failedOnTheTask =
                taskManager.resolveCheckpointStorageLocation(7, failed.getLocationReference());
        StreamStateHandle late =
                write(
                        failedOnTheTask.createCheckpointStateOutputStream(
                                CheckpointedStateScope.EXCLUSIVE),
                        randomBytes(MB, 7));
        CompletedCheckpointStorageLocation retained = complete(jobManager, 8);
        String failedRows = TableRows.directoryOf(failed);
        assertThat(TableRows.rowsContaining(connection, TABLE, failedRows)).hasSize(2);

        completed.disposeStorageLocation();

        assertThat(TableRows.rowsContaining(connection, TABLE, TableRows.directoryOf(completed.getExternalPointer()))).isEmpty();
        assertThat(TableRows.rowsContaining(connection, TABLE, failedRows)).isEmpty();
        assertThatThrownBy(() -> readAll(late)).isInstanceOf(IOException.class);
        assertThat(readAll(retained.getMetadataHandle())).isEqualTo(randomBytes(MB, 8));
    }

    /**
     * Two accesses that drew the same run (one chance in 2^64; forced here) under one job id: the
     * second never replaces nor deletes the checkpoint the first committed. Its metadata stream
     * fails before writing a row, or, opened before the first one's commit, at its own commit
     * (conditional on the metadata being absent); its failure disposal deletes nothing.
     */
    @Test
    void aCheckpointThatAnotherRunCommittedIsNeitherReplacedNorDeleted() throws Exception {
        JobID job = new JobID();
        HBaseCheckpointStorage storage = storage(new Configuration());
        HBaseStorageSettings settings = HBaseStorageSettings.fromConfig(HBASE.storageOptions(TABLE));
        String run = RunId.random();
        CheckpointStorageAccess first = new HBaseCheckpointStorageAccess(storage, settings, job, null, run);
        CheckpointStorageAccess second = new HBaseCheckpointStorageAccess(storage, settings, job, null, run);
        CheckpointStorageLocation racing = second.initializeLocationForCheckpoint(3);
        CheckpointMetadataOutputStream openedBeforeTheCommit = racing.createMetadataOutputStream();

        CompletedCheckpointStorageLocation committed = complete(first, 3);
        List<String> rows = TableRows.rowsContaining(connection, TABLE, TableRows.directoryOf(committed.getExternalPointer()));

        assertThatThrownBy(openedBeforeTheCommit::closeAndFinalizeCheckpoint)
                .isInstanceOf(IOException.class)
                .hasMessageContaining("'" + TABLE + "'")
                .hasMessageContaining("checkpoint 3 of job " + job);
        CheckpointStorageLocation late = second.initializeLocationForCheckpoint(3);
        assertThatThrownBy(late::createMetadataOutputStream)
                .isInstanceOf(IOException.class)
                .hasMessageContaining("'" + TABLE + "'")
                .hasMessageContaining("checkpoint 3 of job " + job);
        racing.disposeOnFailure();
        late.disposeOnFailure();

        assertThat(TableRows.rowsContaining(connection, TABLE, TableRows.directoryOf(committed.getExternalPointer())))
                .isEqualTo(rows);
        assertThat(readAll(storage.resolveCheckpoint(committed.getExternalPointer()).getMetadataHandle()))
                .isEqualTo(randomBytes(MB, 3));
    }

    /**
     * Pointers without a run, as older versions wrote them, resolve to their rows ({@code
     * <job-id>/chk-<n>/}), streams without a length row read to their last chunk, and a run's
     * checkpoint of the same number and job, completed and disposed, leaves those rows alone.
     */
    @Test
    void pointersWithoutARunStillResolveAndNoRunReachesTheirRows() throws Exception {
        JobID job = new JobID();
        HBaseCheckpointStorage storage = storage(new Configuration());
        HBaseStorageSettings settings = HBaseStorageSettings.fromConfig(HBASE.storageOptions(TABLE));
        String olderPointer = "hbase://" + TABLE + "/" + job + "/chk-4";
        CheckpointStorageLocation older =
                new HBaseCheckpointStorageLocation(
                        settings,
                        HBaseCheckpointPointer.parse(olderPointer),
                        new FailedCheckpointDirectories(settings));
        StreamStateHandle stream =
                write(older.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE), randomBytes(3 * MB, 40));
        try (CheckpointMetadataOutputStream out = older.createMetadataOutputStream()) {
            out.write(randomBytes(MB, 4));
            assertThat(out.closeAndFinalizeCheckpoint().getExternalPointer()).isEqualTo(olderPointer);
        }
        // Older versions wrote no length row for state streams.
        String streamLength = CheckpointStreams.streamKey((FileStateHandle) stream) + "/length";
        try (Table table = connection.getTable(TableName.valueOf(TABLE))) {
            for (String row : TableRows.rowsContaining(connection, TABLE, streamLength)) {
                table.delete(new Delete(Bytes.toBytes(row)));
            }
        }
        List<String> olderRows = TableRows.rowsContaining(connection, TABLE, job + "/chk-4/");
        assertThat(olderRows).hasSize(4);

        CompletedCheckpointStorageLocation ofARun = complete(access(storage, job), 4);
        ofARun.disposeStorageLocation();

        assertThat(TableRows.rowsContaining(connection, TABLE, job + "/chk-4/")).isEqualTo(olderRows);
        assertThat(readAll(storage.resolveCheckpoint(olderPointer).getMetadataHandle())).isEqualTo(randomBytes(MB, 4));
        assertThat(readAll(stream)).isEqualTo(randomBytes(3 * MB, 40));
    }

    /** Completes checkpoint {@code id} with a metadata stream of 1 MB (seeded by the id). */
    private static CompletedCheckpointStorageLocation complete(
            CheckpointStorageAccess access, long id) throws IOException {
        try (CheckpointMetadataOutputStream out =
                access.initializeLocationForCheckpoint(id).createMetadataOutputStream()) {
            out.write(randomBytes(MB, id));
            return out.closeAndFinalizeCheckpoint();
        }
    }

    @ParameterizedTest
    @EnumSource(WalDurability.class)
    void everyDurabilityWritesReadableChunks(WalDurability durability) throws Exception {
        Configuration conf = new Configuration();
        conf.set(HBaseCheckpointStorageOptions.DURABILITY, durability);
        conf.setString(HBaseCheckpointStorageOptions.CHUNK_SIZE.key(), "64kb");
        JobID job = new JobID();
        CheckpointStorageLocation location = access(storage(conf), job).initializeLocationForCheckpoint(1);
        byte[] bytes = randomBytes(200 * 1024, durability.ordinal());

        StreamStateHandle handle =
                write(location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE), bytes);

        // Four chunks and the length row.
        assertThat(TableRows.rowsContaining(connection, TABLE, job.toString())).hasSize(5);
        assertThat(readAll(handle)).isEqualTo(bytes);
    }

    @Test
    void clusterConfigurationAloneMakesATablesPathsReadable() throws Exception {
        Configuration cluster = new Configuration();
        cluster.set(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, HBASE.zookeeperQuorum());
        cluster.set(HBaseCheckpointStorageOptions.TABLE, "configured_only");
        org.apache.flink.core.fs.Path missing =
                new org.apache.flink.core.fs.Path("hbase://configured_only/" + new JobID() + "/chk-1/x");

        assertThatThrownBy(() -> missing.getFileSystem().open(missing))
                .hasMessageContaining("No HBase checkpoint storage for table 'configured_only'");

        // What Flink's FileSystem.initialize does with the cluster configuration at process start.
        new HBaseStateFileSystemFactory().configure(cluster);
        assertThatThrownBy(() -> missing.getFileSystem().open(missing))
                .isInstanceOf(FileNotFoundException.class)
                .hasMessageContaining(missing.toString());
    }

    @Test
    void pointersOfAnotherTableOrMalformedOnesAreRejectedClearly() {
        HBaseCheckpointStorage storage = storage(new Configuration());
        String otherTable = "hbase://other_table/" + new JobID() + "/chk-3";
        assertThatThrownBy(() -> storage.resolveCheckpoint(otherTable))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("'other_table'")
                .hasMessageContaining(HBaseCheckpointStorageOptions.TABLE.key());
        assertThatThrownBy(() -> storage.resolveCheckpoint("hbase://" + TABLE + "/not-a-job/chk-x"))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("hbase://<table>/<job-id>/run-<16 hex digits>/chk-<n>");
    }
}
