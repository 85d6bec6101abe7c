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

package org.appendlog.statebackend;

import org.appendlog.statebackend.snapshot.LocalCopyHandle;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.LocalRecoveryConfig;
import org.apache.flink.runtime.state.LocalSnapshotDirectoryProvider;
import org.apache.flink.runtime.state.LocalSnapshotDirectoryProviderImpl;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.util.FileUtils;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * With Flink's local backup on, every checkpoint keeps a task-local copy of the segments and the
 * manifest it lists, under the directories Flink's task-local state store gives the subtask; a
 * restore from that local state reads the copies, not the remote log, and a damaged copy fails
 * the restore (Flink then restores the JobManager's copy) unless it is only cut short.
 */
class LocalRecoveryTest {

    private static final int KEYS = 10_000;

    @RegisterExtension final BackendFixture fixture = new BackendFixture();
    @TempDir Path localState;

    private LocalSnapshotDirectoryProvider directories;
    private LocalRecoveryConfig localRecovery;

    @BeforeEach
    void localStateStore() {
        directories =
                new LocalSnapshotDirectoryProviderImpl(
                        localState.resolve("aid_1").toFile(), new JobID(), new JobVertexID(), 0);
        localRecovery = LocalRecoveryConfig.backupAndRecoveryEnabled(directories);
    }

    @Test
    void aCheckpointKeepsALocalCopyOfEverySegmentAndItsManifest() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        try (BackendHarness harness = open(stateBackend, List.of())) {
            writeKeys(harness, 1);
            taken(harness, 1);
            writeKeys(harness, 2);
            SnapshotResult<KeyedStateHandle> second = taken(harness, 2);

            LocalCopyHandle local = (LocalCopyHandle) second.getTaskLocalSnapshot();
            IncrementalRemoteKeyedStateHandle remote =
                    (IncrementalRemoteKeyedStateHandle) second.getJobManagerOwnedSnapshot();
            assertThat(local.copies().toPath())
                    .startsWith(directories.subtaskSpecificCheckpointDirectory(2).toPath());
            assertThat(local.getSharedState()).hasSize(remote.getSharedState().size()).isNotEmpty();
            for (HandleAndLocalPath segment : local.getSharedState()) {
                java.nio.file.Path remoteFile =
                        Path.of(((FileStateHandle) segment.getHandle()).getFilePath().toUri());
                assertThat(Files.readAllBytes(local.copies().toPath().resolve(segment.getLocalPath())))
                        .as("the local copy of %s", segment.getLocalPath())
                        .isEqualTo(Files.readAllBytes(remoteFile));
            }
            StreamStateHandle manifest = local.getMetaDataStateHandle();
            assertThat(manifest).isInstanceOf(FileStateHandle.class);
            assertThat(Path.of(((FileStateHandle) manifest).getFilePath().toUri()))
                    .hasParent(local.copies().toPath());
            assertThat(manifest.asBytesIfInMemory()).isEmpty();
            assertThat(Files.readAllBytes(Path.of(((FileStateHandle) manifest).getFilePath().toUri())))
                    .isEqualTo(remote.getMetaDataStateHandle().asBytesIfInMemory().get());
        }
    }

    /**
     * The remote segments are gone, so the restore can only have read the local copies; the
     * restored backend takes them up, and its next checkpoint's local copy holds them again after
     * the first backend deleted its working copies.
     */
    @Test
    void aRestoreFromTheLocalStateReadsTheLocalCopies() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend(withoutCompaction());
        LocalCopyHandle second;
        try (BackendHarness harness = open(stateBackend, List.of())) {
            writeKeys(harness, 1);
            taken(harness, 1);
            writeKeys(harness, 2);
            second = (LocalCopyHandle) taken(harness, 2).getTaskLocalSnapshot();
        }
        assertThat(workingCopy(second)).doesNotExist();
        for (Path segment : fixture.segmentFiles()) {
            Files.delete(segment);
        }

        LocalCopyHandle third;
        try (BackendHarness restored = open(stateBackend, List.of(second))) {
            assertValues(restored, 2);
            assertThat(restored.restoredBytes()).isPositive();
            restored.put(0, -1L);
            third = (LocalCopyHandle) taken(restored, 3).getTaskLocalSnapshot();
        }
        assertThat(third.getSharedState()).hasSizeGreaterThan(second.getSharedState().size());
        assertRestoresFromTheLocalCopyAlone(stateBackend, third, 2);
    }

    /**
     * A restore from the JobManager's copy (another TaskManager, or a lost local directory)
     * fetches the restored segments in the background, and the checkpoints after it keep them
     * locally again: the remote segments can go, and the local state still restores.
     */
    @Test
    void aRestoreFromTheRemoteCheckpointFetchesItsSegmentsForTheNextLocalCopy() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend(withoutCompaction());
        SnapshotResult<KeyedStateHandle> first;
        try (BackendHarness harness = open(stateBackend, List.of())) {
            writeKeys(harness, 1);
            first = taken(harness, 1);
        }
        FileUtils.deleteDirectory(directories.subtaskSpecificCheckpointDirectory(1));
        IncrementalRemoteKeyedStateHandle remote =
                (IncrementalRemoteKeyedStateHandle) first.getJobManagerOwnedSnapshot();

        LocalCopyHandle second;
        try (BackendHarness restored = open(stateBackend, List.of(remote))) {
            assertValues(restored, 1);
            // The restored backend's is the only working copy now.
            File fetched =
                    new File(
                            onlyWorkingCopy(), remote.getSharedState().get(0).getLocalPath());
            for (int wait = 0; wait < 300 && !fetched.isFile(); wait++) {
                Thread.sleep(100);
            }
            restored.put(0, -1L);
            second = (LocalCopyHandle) taken(restored, 2).getTaskLocalSnapshot();
        }
        assertThat(second.getSharedState()).hasSize(2);
        assertRestoresFromTheLocalCopyAlone(stateBackend, second, 1);
    }

    /**
     * Every segment of {@code local} has its copy, and with the remote segments deleted, it
     * restores key 0 as -1 and the others as of {@code checkpoint}.
     */
    private void assertRestoresFromTheLocalCopyAlone(
            AppendLogStateBackend stateBackend, LocalCopyHandle local, int checkpoint)
            throws Exception {
        for (HandleAndLocalPath segment : local.getSharedState()) {
            assertThat(local.copies().toPath().resolve(segment.getLocalPath())).isRegularFile();
        }
        for (Path segment : fixture.segmentFiles()) {
            Files.delete(segment);
        }
        try (BackendHarness again = open(stateBackend, List.of(local))) {
            assertThat(again.get(0)).isEqualTo(-1L);
            for (int key = 1; key < KEYS; key++) {
                assertThat(again.get(key)).isEqualTo(value(key, checkpoint));
            }
        }
    }

    @Test
    void aDamagedCopyFailsTheRestoreAndTheRemoteCheckpointRestores() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        SnapshotResult<KeyedStateHandle> first;
        try (BackendHarness harness = open(stateBackend, List.of())) {
            writeKeys(harness, 1);
            first = taken(harness, 1);
        }
        LocalCopyHandle local = (LocalCopyHandle) first.getTaskLocalSnapshot();
        File copy = onlyCopy(local);
        try (RandomAccessFile file = new RandomAccessFile(copy, "rw")) {
            long middle = file.length() / 2;
            file.seek(middle);
            int b = file.read();
            file.seek(middle);
            file.write(b ^ 0xff);
        }

        assertThatThrownBy(() -> open(stateBackend, List.of(local)).close())
                .hasStackTraceContaining(copy.getName());
        fixture.assertRestores(
                stateBackend,
                (IncrementalRemoteKeyedStateHandle) first.getJobManagerOwnedSnapshot(),
                KEYS,
                key -> value(key, 1));
    }

    /** A copy shorter than the checkpoint's segment (the disk filled up) is not read. */
    @Test
    void aCopyCutShortIsReadRemotely() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        LocalCopyHandle local;
        try (BackendHarness harness = open(stateBackend, List.of())) {
            writeKeys(harness, 1);
            local = (LocalCopyHandle) taken(harness, 1).getTaskLocalSnapshot();
        }
        File copy = onlyCopy(local);
        try (RandomAccessFile file = new RandomAccessFile(copy, "rw")) {
            file.setLength(file.length() / 2);
        }
        try (BackendHarness restored = open(stateBackend, List.of(local))) {
            assertValues(restored, 1);
        }
    }

    /**
     * The working copy holds no segment the remote log no longer has: compaction's dropped
     * segments leave it as they leave the log; once the backend is disposed, and Flink deleted
     * the checkpoints' local directories, no file is left.
     */
    @Test
    void theLocalCopyNeverHoldsMoreThanTheLog() throws Exception {
        Configuration options = new Configuration();
        options.setString(AppendLogOptions.SEGMENT_SIZE.key(), "16kb");
        AppendLogStateBackend stateBackend = fixture.backend(options);
        LocalCopyHandle last = null;
        try (BackendHarness harness = open(stateBackend, List.of())) {
            for (int checkpoint = 1; checkpoint <= 12; checkpoint++) {
                writeKeys(harness, checkpoint);
                last = (LocalCopyHandle) taken(harness, checkpoint).getTaskLocalSnapshot();
                harness.awaitCompaction();
            }
            assertThat(BackendHarness.compactionPasses(harness.backend)).isPositive();
            Set<String> working = names(workingCopy(last).toPath());
            Set<String> remote =
                    fixture.segmentFiles().stream()
                            .map(p -> p.getFileName().toString())
                            .collect(Collectors.toSet());
            assertThat(working).isNotEmpty();
            assertThat(remote).containsAll(working);
            assertThat(working)
                    .containsAll(
                            last.getSharedState().stream()
                                    .map(HandleAndLocalPath::getLocalPath)
                                    .collect(Collectors.toList()));
        }
        assertThat(workingCopy(last)).doesNotExist();
        for (int checkpoint = 1; checkpoint <= 12; checkpoint++) {
            FileUtils.deleteDirectory(directories.subtaskSpecificCheckpointDirectory(checkpoint));
        }
        try (Stream<Path> files = Files.walk(localState)) {
            assertThat(files.filter(Files::isRegularFile)).isEmpty();
        }
    }

    private BackendHarness open(AppendLogStateBackend stateBackend, List<KeyedStateHandle> handles)
            throws Exception {
        return BackendHarness.restore(stateBackend, fixture.registry(), handles, localRecovery);
    }

    /** Checkpoint {@code id}, registered and confirmed as the coordinator would. */
    private static SnapshotResult<KeyedStateHandle> taken(BackendHarness harness, long id)
            throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> asyncPhase = harness.snapshot(id);
        asyncPhase.run();
        SnapshotResult<KeyedStateHandle> result = asyncPhase.get();
        harness.confirm((IncrementalRemoteKeyedStateHandle) result.getJobManagerOwnedSnapshot(), id);
        return result;
    }

    private static Configuration withoutCompaction() {
        Configuration options = new Configuration();
        options.set(AppendLogOptions.COMPACTION_ENABLED, false);
        return options;
    }

    private File workingCopy(LocalCopyHandle handle) {
        return new File(
                directories.selectSubtaskBaseDirectory(0),
                "appendlog-" + handle.getBackendIdentifier());
    }

    private File onlyWorkingCopy() throws Exception {
        try (Stream<Path> dirs = Files.list(directories.selectSubtaskBaseDirectory(0).toPath())) {
            List<Path> working =
                    dirs.filter(p -> p.getFileName().toString().startsWith("appendlog-"))
                            .collect(Collectors.toList());
            assertThat(working).hasSize(1);
            return working.get(0).toFile();
        }
    }

    private static File onlyCopy(LocalCopyHandle local) {
        assertThat(local.getSharedState()).hasSize(1);
        return new File(local.copies(), local.getSharedState().get(0).getLocalPath());
    }

    private static Set<String> names(Path dir) throws Exception {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).collect(Collectors.toSet());
        }
    }

    /** Every key is written, every checkpoint: compaction finds whole segments dead. */
    private static void writeKeys(BackendHarness harness, int checkpoint) throws Exception {
        for (int key = 0; key < KEYS; key++) {
            harness.put(key, value(key, checkpoint));
        }
    }

    private static long value(int key, int checkpoint) {
        return (long) key * 100 + checkpoint;
    }

    private static void assertValues(BackendHarness harness, int checkpoint) throws Exception {
        for (int key = 0; key < KEYS; key++) {
            assertThat(harness.get(key)).as("key %d", key).isEqualTo(value(key, checkpoint));
        }
    }
}
