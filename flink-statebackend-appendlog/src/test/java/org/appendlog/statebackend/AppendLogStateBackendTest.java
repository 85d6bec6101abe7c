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

import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;
import org.apache.flink.util.function.SupplierWithException;

import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.Arrays;
import java.util.List;

/**
 * Flink's own keyed state backend contract ({@link StateBackendTestBase} from flink-runtime's test
 * jar), for the append-log backend with its log on the local file system, and the manifests in
 * memory or in files.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class AppendLogStateBackendTest extends StateBackendTestBase<AppendLogStateBackend> {

    @TempDir private static Path tempFolder;

    @Parameters(name = "checkpoint storage: {0}")
    public static List<Object[]> storages() {
        return Arrays.asList(
                new Object[] {
                    "jobmanager",
                    (SupplierWithException<CheckpointStorage, IOException>)
                            JobManagerCheckpointStorage::new
                },
                new Object[] {
                    "filesystem",
                    (SupplierWithException<CheckpointStorage, IOException>)
                            () ->
                                    new FileSystemCheckpointStorage(
                                            tempFolder.resolve("checkpoints").toUri().toString())
                });
    }

    @Parameter public String storageName;

    @Parameter(1)
    public SupplierWithException<CheckpointStorage, IOException> storageSupplier;

    @Override
    protected ConfigurableStateBackend getStateBackend() {
        return new AppendLogStateBackend(tempFolder.resolve("log").toUri().toString());
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() throws Exception {
        return storageSupplier.get();
    }

    @Override
    protected boolean isSerializerPresenceRequiredOnRestore() {
        return true;
    }

    @Override
    protected boolean supportsAsynchronousSnapshots() {
        return true;
    }
}
