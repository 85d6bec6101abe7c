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
import org.apache.flink.runtime.state.StateBackendMigrationTestBase;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;

import org.junit.jupiter.api.extension.ExtendWith;

import java.util.Arrays;
import java.util.List;

/**
 * Flink's state migration contract ({@link StateBackendMigrationTestBase} from flink-runtime's
 * test jar): serializers that are compatible after migration or reconfiguration, and
 * incompatible ones, for keys, namespaces, values and timers; each case checkpoints again after
 * the migration and restores that.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class AppendLogStateBackendMigrationTest
        extends StateBackendMigrationTestBase<AppendLogStateBackend> {

    /** The base's cases are templates; one run of them, with the log on local files. */
    @Parameters(name = "log: {0}")
    public static List<String> logs() {
        return Arrays.asList("local files");
    }

    @Parameter public String log;

    @Override
    protected AppendLogStateBackend getStateBackend() {
        return new AppendLogStateBackend(tempFolder.resolve("log").toUri().toString());
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() {
        return new JobManagerCheckpointStorage();
    }
}
