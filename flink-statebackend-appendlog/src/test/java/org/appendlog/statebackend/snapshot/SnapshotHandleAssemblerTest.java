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

package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.SyncMode;
import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchCompression;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.FilePermissions;
import org.appendlog.statebackend.log.RecordFormat;
import org.appendlog.statebackend.log.SegmentedLog;

import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.PlaceholderStreamStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.util.List;
import java.util.Set;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The handle a checkpoint hands Flink: its segments as shared state, those a checkpoint referred
 * to before as placeholders, last; its manifest listing its batches. The JobManager's side of
 * these handles is in {@code CheckpointFaultTest} and {@code CompactionInterleavingTest}.
 */
class SnapshotHandleAssemblerTest {

    private static final KeyGroupRange KEY_GROUPS = KeyGroupRange.of(0, 0);

    @TempDir File dir;
    private SegmentedLog log;
    private final UUID backendId = UUID.randomUUID();

    @BeforeEach
    void open() {
        log = localLog(dir);
    }

    @AfterEach
    void close() {
        log.close();
    }

    @Test
    void segmentsOfEarlierCheckpointsArePlaceholdersListedLast() throws Exception {
        BatchLocation earlier = log.append(batch(1), Set.of());
        BatchLocation own = log.append(batch(2), Set.of(earlier.segment()));
        SnapshotBatches written =
                new SnapshotBatches(
                        List.of(earlier, own), Set.of(earlier.segment()), List.of(), own.length());

        SnapshotResult<KeyedStateHandle> result = assemble(false, written);

        IncrementalRemoteKeyedStateHandle handle =
                (IncrementalRemoteKeyedStateHandle) result.getJobManagerOwnedSnapshot();
        List<HandleAndLocalPath> shared = handle.getSharedState();
        assertThat(shared)
                .extracting(HandleAndLocalPath::getLocalPath)
                .containsExactly(own.segment(), earlier.segment());
        assertThat(shared.get(0).getHandle()).isNotInstanceOf(PlaceholderStreamStateHandle.class);
        assertThat(shared.get(1).getHandle()).isInstanceOf(PlaceholderStreamStateHandle.class);
        assertThat(handle.getCheckpointedSize())
                .isEqualTo(own.length() + handle.getMetaDataStateHandle().getStateSize());
        assertThat(result.getTaskLocalSnapshot()).isNull();
        CheckpointManifest manifest =
                CheckpointManifest.read(
                        handle.getMetaDataStateHandle().asBytesIfInMemory().get(),
                        "manifest",
                        getClass().getClassLoader());
        assertThat(manifest.batches())
                .extracting(BatchLocation::key)
                .containsExactly(earlier.key(), own.key());
    }

    @Test
    void withLocalBackupTheTaskKeepsAReferenceToEverySegment() throws Exception {
        BatchLocation earlier = log.append(batch(1), Set.of());
        SnapshotBatches written =
                new SnapshotBatches(List.of(earlier), Set.of(earlier.segment()), List.of(), 0);

        SnapshotResult<KeyedStateHandle> result = assemble(true, written);

        assertThat(result.getTaskLocalSnapshot()).isInstanceOf(LocalCopyHandle.class);
        assertThat(((LocalCopyHandle) result.getTaskLocalSnapshot()).getSharedState())
                .extracting(h -> h.getHandle() instanceof PlaceholderStreamStateHandle)
                .containsExactly(false);
    }

    private SnapshotResult<KeyedStateHandle> assemble(boolean localBackup, SnapshotBatches written)
            throws Exception {
        return new SnapshotHandleAssembler(backendId, KEY_GROUPS, log, localBackup)
                .assemble(
                        captured(2),
                        written,
                        new MemCheckpointStreamFactory(1 << 20),
                        new CloseableRegistry());
    }

    /** A log of one key group in {@code dir}; every batch in a segment of its own. */
    static SegmentedLog localLog(File dir) {
        return new SegmentedLog(
                FileSystem.getLocalFileSystem(),
                Path.fromLocalFile(dir),
                "kg-0-0",
                1 << 20,
                SyncMode.NONE,
                BatchCompression.LZ4,
                true,
                FilePermissions.of((short) 0700, (short) 0600));
    }

    private static AppendLogSnapshotResources captured(long checkpointId) {
        return new AppendLogSnapshotResources(
                checkpointId,
                AppendLogSnapshotResources.Mode.INCREMENTAL,
                new KeyedBackendSerializationProxy<>(IntSerializer.INSTANCE, List.of(), false),
                TimerFormat.capture(List.of()),
                List.of("counts"),
                null,
                null,
                -1);
    }

    private static BatchBuilder batch(long checkpointId) throws Exception {
        BatchBuilder batch = new BatchBuilder(checkpointId, KEY_GROUPS, List.of("counts"));
        byte[] key = ("key-" + checkpointId).getBytes(StandardCharsets.UTF_8);
        byte[] value = {(byte) checkpointId};
        RecordFormat.write(batch, 0, checkpointId, 0, key, 0, key.length, value, 0, value.length);
        return batch;
    }
}
