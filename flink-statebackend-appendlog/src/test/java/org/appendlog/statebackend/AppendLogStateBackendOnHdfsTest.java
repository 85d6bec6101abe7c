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

import org.appendlog.testing.MiniHdfs;

import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.StateBackendTestBase;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameter;
import org.apache.flink.testutils.junit.extensions.parameterized.ParameterizedTestExtension;
import org.apache.flink.testutils.junit.extensions.parameterized.Parameters;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.extension.ExtendWith;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collections;
import java.util.List;

/**
 * Flink's keyed state backend contract with the log and the checkpoints on HDFS (a real NameNode
 * and DataNode in this JVM), synced with hsync.
 */
@ExtendWith(ParameterizedTestExtension.class)
public class AppendLogStateBackendOnHdfsTest extends StateBackendTestBase<AppendLogStateBackend> {

    @TempDir private static Path tempFolder;
    private static MiniHdfs hdfs;
    private static String hdfsRoot;

    @Parameters(name = "sync mode: {0}")
    public static List<Object[]> syncModes() {
        return Collections.singletonList(new Object[] {SyncMode.HSYNC});
    }

    @Parameter public SyncMode syncMode;

    @BeforeAll
    static void startHdfs() throws Exception {
        hdfs = new MiniHdfs(tempFolder.resolve("hdfs"));
        hdfsRoot = hdfs.root();
    }

    @AfterAll
    static void stopHdfs() {
        if (hdfs != null) {
            hdfs.close();
        }
    }

    @Override
    protected ConfigurableStateBackend getStateBackend() {
        return new AppendLogStateBackend(hdfsRoot + "/appendlog").withSyncMode(syncMode);
    }

    @Override
    protected CheckpointStorage getCheckpointStorage() {
        return new FileSystemCheckpointStorage(hdfsRoot + "/checkpoints");
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
