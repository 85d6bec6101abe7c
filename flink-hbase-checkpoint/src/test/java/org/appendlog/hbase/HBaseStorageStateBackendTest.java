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

import org.appendlog.statebackend.AppendLogStateBackend;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink's own keyed state backend contract ({@link StateBackendTestBase} from flink-runtime's test
 * jar) with every checkpoint stream in HBase rows: under {@code hashmap}, all keyed state goes
 * through this storage's streams; under {@code appendlog}, the manifests and savepoints do.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class HBaseStorageStateBackendTest extends StateBackendTestBase<AbstractStateBackend> {

    @RegisterExtension static final HBaseClusterExtension HBASE = new HBaseClusterExtension();

    @TempDir private static Path appendLogDir;

    @Parameters(name = "state backend: {0}")
    public static List<String> backends() {
        return List.of("hashmap", "appendlog");
    }

    @Parameter public String backend;

    @Override
    protected ConfigurableStateBackend getStateBackend() {
        return backend.equals("hashmap")
                ? new HashMapStateBackend()
                : new AppendLogStateBackend(appendLogDir.toUri().toString());
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() {
        Configuration options = HBASE.storageOptions(table(backend));
        // Low, so that most streams become rows rather than bytes inline in their handles.
        options.set(HBaseCheckpointStorageOptions.INLINE_THRESHOLD, MemorySize.parse("64b"));
        return new HBaseCheckpointStorageFactory()
                .createFromConfig(options, HBaseStorageStateBackendTest.class.getClassLoader());
    }

    /** One table per backend, so that each backend's rows are counted apart. */
    private static String table(String backend) {
        return "backend_contract_" + backend;
    }

    /** The cases never look at the storage; this shows that each backend's streams were rows. */
    @AfterAll
    static void streamsWereRows() throws IOException {
        for (String backend : backends()) {
            assertThat(TableRows.rowsContaining(HBASE.utility().getConnection(), table(backend), "/"))
                    .as("rows of the checkpoint streams the cases wrote under %s", backend)
                    .isNotEmpty();
        }
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
