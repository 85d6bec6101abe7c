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
import org.appendlog.statebackend.faults.FaultHarness.Completed;
import org.appendlog.testing.MiniHdfs;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;
import org.apache.flink.core.fs.FileSystemSafetyNet;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.plugin.PluginManager;
import org.apache.flink.runtime.fs.hdfs.HadoopFsFactory;
import org.apache.flink.util.WrappingProxy;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.URI;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Iterator;
import java.util.List;
import java.util.concurrent.Callable;
import java.util.concurrent.FutureTask;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A restore on a task thread after the only DataNode restarted under an open segment: the segment
 * is unreadable until its lease is recovered, and on a task thread Flink hands out its file
 * systems wrapped in the safety net (and, for a file system loaded as a plugin, in a class-loader
 * fixing wrapper as well). The restore must see through the wrappers, recover the lease and
 * restore exactly within seconds, not wait for the NameNode's hard lease limit.
 */
class LeaseRecoveryInTaskTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("hdfs-lease-in-task");
    /** Far below the NameNode's hard lease limit (20 minutes), and below the soft one (1 minute). */
    private static final long RESTORE_LIMIT_MILLIS = 20_000;

    @TempDir static java.nio.file.Path base;
    private static MiniHdfs hdfs;
    private static int run;

    @BeforeAll
    static void startHdfs() throws Exception {
        hdfs = new MiniHdfs(base.resolve("hdfs"));
    }

    @AfterAll
    static void stopHdfs() {
        if (hdfs != null) {
            hdfs.close();
        }
    }

    @AfterEach
    void plainFileSystems() {
        FileSystem.initialize(new Configuration(), null);
    }

    @ParameterizedTest(name = "HDFS loaded as a plugin: {0}")
    @ValueSource(booleans = {false, true})
    void restoresOnATaskThreadAfterTheDataNodeRestarted(boolean asPlugin) throws Exception {
        if (asPlugin) {
            FileSystem.initialize(new Configuration(), new HdfsPlugin());
        }
        String root = hdfs.root() + "/run-" + (++run);
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, root + "/log");
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        AppendLogStateBackend stateBackend =
                new AppendLogStateBackend().configure(config, getClass().getClassLoader());
        String checkpoints = root + "/checkpoints";

        // The writer is abandoned, never closed, as by a crash; its client still holds the lease.
        FaultHarness writer = FaultHarness.open(stateBackend, checkpoints);
        for (int key = 0; key < 500; key++) {
            writer.put(key, key);
        }
        writer.checkpoint(1);
        for (int key = 0; key < 100; key++) {
            writer.put(key, 1000 + key);
        }
        Completed second = writer.checkpoint(2);
        hdfs.restartDataNode();

        long start = System.nanoTime();
        String wrappers =
                onTaskThread(
                        () -> {
                            List<String> seen = wrappersOf(new Path(root).getFileSystem());
                            FaultHarness.assertRestoresExactly(stateBackend, checkpoints, second);
                            return String.join(" around ", seen);
                        });
        long millis = (System.nanoTime() - start) / 1_000_000;

        assertThat(wrappers).contains("SafetyNetWrapperFileSystem");
        if (asPlugin) {
            assertThat(wrappers).contains("ClassLoaderFixingFileSystem");
        }
        assertThat(millis).isLessThan(RESTORE_LIMIT_MILLIS);
        RELIABILITY.record(
                "Restore on a task thread (file system " + wrappers + ") after the only DataNode"
                        + " restarted under the open segment of checkpoint 2",
                "The lease is recovered through the wrappers; checkpoint 2 restores exactly in "
                        + (millis < 1000 ? "under a second" : "under " + (millis / 1000 + 1) + " s"));
    }

    /** Runs {@code body} as a task thread runs a restore: with Flink's safety net active. */
    private static <T> T onTaskThread(Callable<T> body) throws Exception {
        FutureTask<T> task =
                new FutureTask<>(
                        () -> {
                            FileSystemSafetyNet.initializeSafetyNetForThread();
                            try {
                                return body.call();
                            } finally {
                                FileSystemSafetyNet.closeSafetyNetAndGuardedResourcesForThread();
                            }
                        });
        Thread thread = new Thread(task, "task thread with file system safety net");
        thread.start();
        return task.get(2, TimeUnit.MINUTES);
    }

    /** The class names of the wrappers around the file system, outermost first. */
    private static List<String> wrappersOf(FileSystem fs) {
        List<String> names = new ArrayList<>();
        Object current = fs;
        while (current instanceof WrappingProxy) {
            names.add(current.getClass().getSimpleName());
            current = ((WrappingProxy<?>) current).getWrappedDelegate();
        }
        return names;
    }

    /** A plugin manager offering Flink's HDFS file system, as a plugins directory would. */
    private static final class HdfsPlugin implements PluginManager {
        @Override
        @SuppressWarnings("unchecked")
        public <P> Iterator<P> load(Class<P> service) {
            if (service == FileSystemFactory.class) {
                return Collections.singletonList((P) new HdfsFactory()).iterator();
            }
            return Collections.emptyIterator();
        }
    }

    /** Flink's Hadoop factory (registered for any scheme) under the scheme {@code hdfs}. */
    private static final class HdfsFactory implements FileSystemFactory {
        private final HadoopFsFactory hadoop = new HadoopFsFactory();

        @Override
        public String getScheme() {
            return "hdfs";
        }

        @Override
        public void configure(Configuration config) {
            hadoop.configure(config);
        }

        @Override
        public FileSystem create(URI fsUri) throws IOException {
            return hadoop.create(fsUri);
        }
    }
}
