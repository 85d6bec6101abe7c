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

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeutils.base.array.BytePrimitiveArraySerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.SavepointType;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;

import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;
import java.util.concurrent.RunnableFuture;

/**
 * Run in a JVM of its own with a heap limit ({@link FullBatchStreamTest}): fills a backend with
 * {@code entries} values of {@code valueBytes} random bytes, takes a native savepoint, restores
 * it, takes the first checkpoint after the restore (a full batch of every entry), lets it complete
 * (the index reads the batch back), and restores that checkpoint, comparing every value. Prints
 * one line per step; exits with 0 only if every value came back.
 *
 * <p>Arguments: log directory URI, checkpoint directory URI, entries, value bytes.
 */
public final class FullBatchHeapCheck {

    static final ValueStateDescriptor<byte[]> VALUES =
            new ValueStateDescriptor<>("values", BytePrimitiveArraySerializer.INSTANCE);

    public static void main(String[] args) throws Exception {
        String logDir = args[0];
        String checkpointDir = args[1];
        int entries = Integer.parseInt(args[2]);
        int valueBytes = Integer.parseInt(args[3]);

        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, logDir);
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        AppendLogStateBackend stateBackend =
                new AppendLogStateBackend()
                        .configure(config, FullBatchHeapCheck.class.getClassLoader());
        CheckpointStreamFactory streams = streams(checkpointDir);

        KeyedStateHandle savepoint;
        AppendLogKeyedStateBackend<Integer> backend = BackendHarness.build(stateBackend, List.of());
        try {
            ValueState<byte[]> values = values(backend);
            for (int key = 0; key < entries; key++) {
                backend.setCurrentKey(key);
                values.update(value(key, valueBytes));
            }
            savepoint = run(backend.snapshot(1, 1, streams, savepointOptions()));
            System.out.println("savepoint written: " + savepoint.getStateSize() + " bytes");
        } finally {
            backend.dispose();
        }

        KeyedStateHandle full;
        backend = BackendHarness.build(stateBackend, List.of(savepoint));
        try {
            full =
                    run(
                            backend.snapshot(
                                    2,
                                    2,
                                    streams,
                                    CheckpointOptions.forCheckpointWithDefaultLocation()));
            backend.notifyCheckpointComplete(2);
            backend.index().awaitUpdates();
            System.out.println(
                    "full checkpoint written: "
                            + full.getStateSize()
                            + " bytes, full batches "
                            + backend.fullBatches()
                            + ", indexed entries "
                            + backend.index().liveEntries());
            if (backend.fullBatches() != 1 || backend.index().liveEntries() != entries) {
                System.exit(2);
            }
        } finally {
            backend.dispose();
        }

        backend = BackendHarness.build(stateBackend, List.of(full));
        try {
            ValueState<byte[]> values = values(backend);
            for (int key = 0; key < entries; key++) {
                backend.setCurrentKey(key);
                if (!Arrays.equals(values.value(), value(key, valueBytes))) {
                    System.out.println("value of key " + key + " differs after the restore");
                    System.exit(3);
                }
            }
            System.out.println(
                    "restored " + backend.numKeyValueStateEntries() + " entries, every value equal");
            if (backend.numKeyValueStateEntries() != entries) {
                System.exit(4);
            }
        } finally {
            backend.dispose();
        }
    }

    static byte[] value(int key, int valueBytes) {
        byte[] value = new byte[valueBytes];
        new SplittableRandom(key).nextBytes(value);
        return value;
    }

    static ValueState<byte[]> values(AppendLogKeyedStateBackend<Integer> backend) throws Exception {
        return backend.getPartitionedState(
                VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, VALUES);
    }

    static CheckpointOptions savepointOptions() {
        return new CheckpointOptions(
                SavepointType.savepoint(SavepointFormatType.NATIVE),
                CheckpointStorageLocationReference.getDefault());
    }

    /** Checkpoint streams into files under {@code dir}, as a job's checkpoint storage writes. */
    static CheckpointStreamFactory streams(String dir) throws Exception {
        Path path = new Path(dir);
        return new FsCheckpointStreamFactory(
                FileSystem.get(path.toUri()),
                new Path(path, "chk"),
                new Path(path, "shared"),
                0,
                4096);
    }

    static KeyedStateHandle run(RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot)
            throws Exception {
        snapshot.run();
        return snapshot.get().getJobManagerOwnedSnapshot();
    }
}
