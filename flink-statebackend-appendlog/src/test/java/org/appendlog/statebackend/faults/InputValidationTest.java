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
import org.appendlog.statebackend.AppendLogStateBackendFactory;
import org.appendlog.statebackend.BackendHarness;
import org.appendlog.statebackend.faults.FaultHarness.Completed;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.concurrent.RunnableFuture;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Everything a user can get wrong fails with an error naming what to fix. */
class InputValidationTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("appendlog-input");

    @TempDir Path dir;

    @AfterEach
    void disarm() {
        FailingLongSerializer.disarm();
    }

    @ParameterizedTest(name = "{0} = ''{1}''")
    @CsvSource({
        "state.backend.appendlog.dir, relative/without/scheme",
        "state.backend.appendlog.segment-size, lots",
        "state.backend.appendlog.segment-size, 10b",
        "state.backend.appendlog.segment-size, -1mb",
        "state.backend.appendlog.change-buffer-size, lots",
        "state.backend.appendlog.change-buffer-size, 100kb",
        "state.backend.appendlog.sync-mode, fsync",
        "state.backend.appendlog.sync-mode, ''",
        "state.backend.appendlog.compression, zstd",
        "state.backend.appendlog.restore-parallelism, two",
        "state.backend.appendlog.restore-parallelism, 0",
        "state.backend.appendlog.restore-parallelism, -3",
        "state.backend.appendlog.full-checkpoint-ratio, half",
        "state.backend.appendlog.full-checkpoint-ratio, 0",
        "state.backend.appendlog.full-checkpoint-ratio, -1",
        "state.backend.appendlog.full-checkpoint-ratio, NaN",
        "state.backend.appendlog.compaction.enabled, maybe",
        "state.backend.appendlog.compaction.min-dirty-ratio, high",
        "state.backend.appendlog.compaction.min-dirty-ratio, 0",
        "state.backend.appendlog.compaction.min-dirty-ratio, 1.5",
        "state.backend.appendlog.compaction.min-dirty-ratio, NaN",
        "state.backend.appendlog.compaction.min-lag, soon",
        "state.backend.appendlog.compaction.min-lag, -5 s",
        "state.backend.appendlog.compaction.io-rate-limit, fast",
        "state.backend.appendlog.compaction.threads, 0",
        "state.backend.appendlog.compaction.threads, many",
        "state.backend.appendlog.seal-every-batch, sometimes",
        "state.backend.appendlog.compaction.max-segments, 1",
        "state.backend.appendlog.compaction.max-segments, few",
        "state.backend.appendlog.directory-permissions, rwx------",
        "state.backend.appendlog.directory-permissions, 800",
        "state.backend.appendlog.directory-permissions, 70",
        "state.backend.appendlog.file-permissions, 0o600",
        "state.backend.appendlog.file-permissions, 60000",
    })
    void badOptionValueFailsNamingTheOption(String key, String value) {
        Configuration config = new Configuration();
        config.setString(AppendLogOptions.LOG_DIR.key(), dir.toUri().toString());
        config.setString(key, value);
        Throwable error =
                catchError(() -> new AppendLogStateBackendFactory().createFromConfig(config, getClass().getClassLoader()));
        assertThat(error)
                .as("%s = '%s'", key, value)
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(key);
        RELIABILITY.record("option " + key + " = '" + value + "'", "rejected at startup: " + error.getMessage());
    }

    @Test
    void noLogDirectoryAtAll() {
        Throwable error =
                catchError(() -> new AppendLogStateBackendFactory().createFromConfig(new Configuration(), getClass().getClassLoader()));
        assertThat(error).isInstanceOf(IllegalConfigurationException.class).hasMessageContaining(AppendLogOptions.LOG_DIR.key());
        RELIABILITY.record("no log directory and no checkpoint directory", "rejected at startup: " + error.getMessage());
    }

    @Test
    void pathWithoutSchemeInTheConstructor() {
        Throwable error = catchError(() -> new AppendLogStateBackend("/data/appendlog"));
        assertThat(error).isInstanceOf(IllegalConfigurationException.class).hasMessageContaining("file:///");
        RELIABILITY.record("new AppendLogStateBackend(\"/data/appendlog\") (no scheme)", "rejected: " + error.getMessage());
    }

    @Test
    void logDirectoryThatCannotBeWritten() throws Exception {
        // Tests run as root, which may write anywhere: a path below a regular file cannot exist.
        Path file = Files.createFile(dir.resolve("a-regular-file"));
        String logDir = file.toUri() + "/appendlog";
        AppendLogStateBackend stateBackend = new AppendLogStateBackend(logDir);
        Throwable error = catchError(() -> BackendHarness.build(stateBackend, Collections.emptyList()).dispose());
        assertThat(error).as("building a backend on %s", logDir).isNotNull();
        assertThat(FaultHarness.messages(error)).contains("a-regular-file").contains(AppendLogOptions.LOG_DIR.key());
        RELIABILITY.record("log directory below a regular file (not writable)", "the backend fails to start: " + FaultHarness.messages(error));
    }

    @Test
    void aRecordLargerThanTheSegmentSize() throws Exception {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, dir.resolve("log").toUri().toString());
        config.setString(AppendLogOptions.SEGMENT_SIZE.key(), "1kb");
        AppendLogStateBackend stateBackend = new AppendLogStateBackend().configure(config, getClass().getClassLoader());
        ValueStateDescriptor<String> big = new ValueStateDescriptor<>("big", StringSerializer.INSTANCE);
        String value = "x".repeat(200_000);
        KeyedStateHandle first;
        KeyedStateHandle second;
        SharedStateRegistry registry = BackendHarness.newRegistry();
        var backend = BackendHarness.build(stateBackend, Collections.emptyList());
        try {
            ValueState<String> state = backend.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, big);
            backend.setCurrentKey(1);
            state.update(value);
            first = snapshot(backend, 1);
            registry.registerAll(Collections.singletonList(first), 1);
            backend.notifyCheckpointComplete(1);
            backend.setCurrentKey(2);
            state.update(value + "y");
            second = snapshot(backend, 2);
            registry.registerAll(Collections.singletonList(second), 2);
        } finally {
            backend.dispose();
        }
        var restored = BackendHarness.build(stateBackend, Collections.singletonList(second));
        try {
            ValueState<String> state = restored.getPartitionedState(VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, big);
            restored.setCurrentKey(1);
            assertThat(state.value()).isEqualTo(value);
            restored.setCurrentKey(2);
            assertThat(state.value()).isEqualTo(value + "y");
        } finally {
            restored.dispose();
        }
        assertThat(DamagedLogTest.segments(dir.resolve("log"))).hasSize(2);
        assertThat(first).isNotNull();
        RELIABILITY.record(
                "a 200 kb record with a 1 kb segment size",
                "works: the batch exceeds the segment, the segment rolls after it (2 checkpoints, 2 segments), both values restore exactly");
    }

    private static KeyedStateHandle snapshot(org.appendlog.statebackend.AppendLogKeyedStateBackend<Integer> backend, long id)
            throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> future =
                backend.snapshot(id, id, new MemCheckpointStreamFactory(Integer.MAX_VALUE), CheckpointOptions.forCheckpointWithDefaultLocation());
        future.run();
        return future.get().getJobManagerOwnedSnapshot();
    }

    /**
     * Immutable values are serialized when written. If that throws, the write stands in the heap
     * and is serialized at the next barrier instead; if that throws too, the checkpoint fails
     * naming the state, and the next one still holds the write.
     */
    @Test
    void aStateSerializerThatThrowsOnWriteAndOnCheckpoint() throws Exception {
        String checkpoints = dir.resolve("checkpoints").toUri().toString();
        AppendLogStateBackend stateBackend = new AppendLogStateBackend(dir.resolve("log").toUri().toString());
        Completed completed;
        try (FaultHarness harness = FaultHarness.open(stateBackend, checkpoints)) {
            harness.put(1, 1);
            FailingLongSerializer.failSerializeAt(1);
            harness.put(2, 2);
            FailingLongSerializer.failSerializeAt(1);
            Throwable error =
                    catchError(
                            () -> {
                                RunnableFuture<SnapshotResult<KeyedStateHandle>> checkpoint =
                                        harness.snapshot(1);
                                checkpoint.run();
                                checkpoint.get();
                            });
            assertThat(FaultHarness.messages(error)).contains("'" + FaultHarness.STATE + "'").contains("Injected failure");
            completed = harness.checkpoint(2);
            RELIABILITY.record(
                    "state serializer throws when a write is logged, then at the next barrier",
                    "the write stands; the checkpoint fails: " + FaultHarness.messages(error)
                            + "; the next checkpoint holds the write and restores exactly");
        }
        FaultHarness.assertRestoresExactly(stateBackend, checkpoints, completed);
        assertThat(completed.state).containsEntry(2, 2L);
    }

    @Test
    void aStateSerializerThatThrowsOnRestore() throws Exception {
        String checkpoints = dir.resolve("checkpoints").toUri().toString();
        AppendLogStateBackend stateBackend = new AppendLogStateBackend(dir.resolve("log").toUri().toString());
        Completed completed;
        try (FaultHarness harness = FaultHarness.open(stateBackend, checkpoints)) {
            harness.put(1, 1);
            completed = harness.checkpoint(1);
        }
        FailingLongSerializer.failDeserializeAt(1);
        Throwable error = catchError(() -> FaultHarness.restore(stateBackend, checkpoints, completed).close());
        assertThat(FaultHarness.messages(error))
                .contains("'" + FaultHarness.STATE + "'")
                .contains(".seg")
                .containsPattern("at offset \\d+")
                .contains("Injected failure");
        RELIABILITY.record("state serializer throws while a restore deserializes", "the restore fails: " + FaultHarness.messages(error));
    }

    private static Throwable catchError(ThrowingRunnable action) {
        try {
            action.run();
            return null;
        } catch (Throwable t) {
            return t;
        }
    }

    @FunctionalInterface
    private interface ThrowingRunnable {
        void run() throws Exception;
    }
}
