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

import org.appendlog.statebackend.log.BatchCompression;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchStream;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Full batches and native savepoints are written as a stream of bounded blocks ({@link
 * BatchStream}): a state many times the block size comes back exactly from both, and a savepoint
 * and a full checkpoint of a state fit a heap that holds the state but not serialized copies of
 * it.
 */
class FullBatchStreamTest {

    /** About 31 MB of records: some 30 blocks. */
    private static final int KEYS = 20_000;

    @TempDir java.nio.file.Path tmp;

    @ParameterizedTest(name = "compression {0}")
    @EnumSource(BatchCompression.class)
    void aStateOfManyBlocksComesBackExactlyFromAFullCheckpointAndASavepoint(
            BatchCompression compression) throws Exception {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, tmp.resolve("log").toUri().toString());
        config.set(AppendLogOptions.COMPRESSION, compression);
        AppendLogStateBackend stateBackend =
                new AppendLogStateBackend().configure(config, getClass().getClassLoader());
        SharedStateRegistry registry = BackendHarness.newRegistry();
        CheckpointStreamFactory streams =
                FullBatchHeapCheck.streams(tmp.resolve("checkpoints").toUri().toString());

        IncrementalRemoteKeyedStateHandle full;
        KeyedStateHandle savepoint;
        try (BackendHarness harness = BackendHarness.open(stateBackend, registry)) {
            ValueState<byte[]> values = FullBatchHeapCheck.values(harness.backend);
            for (int key = 0; key < KEYS; key++) {
                harness.backend.setCurrentKey(key);
                values.update(value(key));
            }
            harness.checkpoint(1);
            long fullBefore = harness.backend.fullBatches();
            for (int key = 0; key < KEYS; key += 7) {
                harness.backend.setCurrentKey(key);
                values.clear();
            }
            full = harness.fullCheckpoint(2);
            assertThat(harness.backend.fullBatches()).as("full batches").isEqualTo(fullBefore + 1);
            // The index read the full batch back from the log: it must equal a restore's.
            harness.assertIndexDescribesTheLog(stateBackend, full);

            savepoint =
                    FullBatchHeapCheck.run(
                            harness.backend.snapshot(
                                    3, 3, streams, FullBatchHeapCheck.savepointOptions()));
        }

        assertRestoresExactly(stateBackend, full);
        assertRestoresExactly(stateBackend, savepoint);

        java.nio.file.Path savepointFile =
                Paths.get(
                        ((FileStateHandle)
                                        ((IncrementalRemoteKeyedStateHandle) savepoint)
                                                .getPrivateState()
                                                .get(0)
                                                .getHandle())
                                .getFilePath()
                                .toUri());
        try (RandomAccessFile file = new RandomAccessFile(savepointFile.toFile(), "r")) {
            file.seek(BatchFormat.SEGMENT_HEADER_BYTES + 4);
            assertThat(file.readByte()).as("batch format version of the savepoint").isEqualTo((byte) 4);
        }
        long rawBytes = 0;
        for (int key = 0; key < KEYS; key++) {
            rawBytes += key % 7 == 0 ? 0 : value(key).length;
        }
        assertThat(rawBytes).as("records' bytes").isGreaterThan(25L * BatchStream.BLOCK_BYTES);
        if (compression == BatchCompression.LZ4) {
            assertThat(Files.size(savepointFile)).as("savepoint bytes").isLessThan(rawBytes / 2);
        }
    }

    /**
     * 128,000 values of 1,000 random bytes (about 130 MB serialized, 145 MB on the heap): a
     * savepoint, its restore, the full checkpoint after it, and that one's restore, all within a
     * 352 MB heap. Writing either into memory would hold the serialized state and its LZ4 copy on
     * top of the state, about 405 MB: more than that heap. (The streaming write needs about 300
     * MB; at 320 MB the collector ran out of room now and then.)
     */
    @Test
    void aSavepointAndAFullCheckpointFitAHeapBelowTheStateAndItsSerializedCopies() throws Exception {
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx352m");
        command.add("-XX:+ExitOnOutOfMemoryError");
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(FullBatchHeapCheck.class.getName());
        command.add(tmp.resolve("log").toUri().toString());
        command.add(tmp.resolve("checkpoints").toUri().toString());
        command.add("128000");
        command.add("1000");
        java.nio.file.Path output = tmp.resolve("child.out");
        Process child =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(output.toFile())
                        .start();
        boolean exited = child.waitFor(180, TimeUnit.SECONDS);
        if (!exited) {
            child.destroyForcibly().waitFor();
        }
        String printed = Files.readString(output, StandardCharsets.UTF_8);
        assertThat(exited).as(printed).isTrue();
        assertThat(printed)
                .doesNotContain("OutOfMemoryError")
                .contains("savepoint written")
                .contains("full checkpoint written")
                .contains("full batches 1, indexed entries 128000")
                .contains("restored 128000 entries, every value equal");
        assertThat(child.exitValue()).as(printed).isZero();
    }

    /** Compressible values of 1 to 2 KB: a few random bytes, repeated. */
    private static byte[] value(int key) {
        SplittableRandom random = new SplittableRandom(key);
        byte[] pattern = new byte[16];
        random.nextBytes(pattern);
        byte[] value = new byte[1024 + random.nextInt(1024)];
        for (int i = 0; i < value.length; i++) {
            value[i] = pattern[i % pattern.length];
        }
        return value;
    }

    private static void assertRestoresExactly(
            AppendLogStateBackend stateBackend, KeyedStateHandle handle) throws Exception {
        AppendLogKeyedStateBackend<Integer> restored =
                BackendHarness.build(stateBackend, List.of(handle));
        try {
            ValueState<byte[]> values = FullBatchHeapCheck.values(restored);
            int present = 0;
            for (int key = 0; key < KEYS; key++) {
                restored.setCurrentKey(key);
                byte[] expected = key % 7 == 0 ? null : value(key);
                assertThat(Arrays.equals(values.value(), expected))
                        .as("value of key %d after restoring %s", key, handle)
                        .isTrue();
                present += expected == null ? 0 : 1;
            }
            assertThat(restored.numKeyValueStateEntries()).isEqualTo(present);
        } finally {
            restored.dispose();
        }
    }
}
