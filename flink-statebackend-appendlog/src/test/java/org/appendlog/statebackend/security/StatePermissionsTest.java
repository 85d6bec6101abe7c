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

package org.appendlog.statebackend.security;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendHarness;
import org.appendlog.testing.MiniHdfs;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.LocatedFileStatus;
import org.apache.hadoop.fs.RemoteIterator;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.net.URI;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The directories and files the backend creates get the configured permissions, not those of the
 * umask (HDFS's default 022 gives 755 and 644): the log directory and the directories below it,
 * segments, compaction runs and the checkpoint manifests Flink's checkpoint storage writes to files
 * of their own; on HDFS and on the local file system. The checkpoint still restores exactly.
 */
class StatePermissionsTest {

    private static final int KEYS = 400;

    @TempDir static java.nio.file.Path tmp;
    private static MiniHdfs hdfs;
    private static org.apache.hadoop.fs.FileSystem hadoopFs;
    private static int run;

    @BeforeAll
    static void startHdfs() throws Exception {
        hdfs = new MiniHdfs(tmp.resolve("hdfs"));
        hadoopFs = hdfs.fileSystem();
    }

    @AfterAll
    static void stopHdfs() {
        if (hdfs != null) {
            hdfs.close();
        }
    }

    @ParameterizedTest(name = "directories {0}, files {1}")
    @CsvSource({"'', ''", "750, 640"})
    void onHdfsTheLogTheRunsAndTheManifestsHaveTheConfiguredPermissions(
            String directories, String files) throws Exception {
        String root = "/run-" + (++run);
        AppendLogStateBackend backend = backend(hdfs.root() + root + "/state/log", directories, files);
        IncrementalRemoteKeyedStateHandle last =
                writeWithCompaction(backend, hdfs.root() + root + "/checkpoints");

        String expectedDirectories = directories.isEmpty() ? "rwx------" : "rwxr-x---";
        String expectedFiles = directories.isEmpty() ? "rw-------" : "rw-r-----";
        Map<String, String> modes = new TreeMap<>();
        for (String dir : new String[] {root + "/state", root + "/state/log"}) {
            modes.put(dir, mode(hadoopFs.getFileStatus(new org.apache.hadoop.fs.Path(dir))));
        }
        RemoteIterator<LocatedFileStatus> below =
                hadoopFs.listLocatedStatus(new org.apache.hadoop.fs.Path(root + "/state/log"));
        String jobDir = below.next().getPath().toUri().getPath();
        modes.put(jobDir, mode(hadoopFs.getFileStatus(new org.apache.hadoop.fs.Path(jobDir))));
        for (FileStatus operatorDir : hadoopFs.listStatus(new org.apache.hadoop.fs.Path(jobDir))) {
            modes.put(operatorDir.getPath().toUri().getPath(), mode(operatorDir));
            for (FileStatus segment : hadoopFs.listStatus(operatorDir.getPath())) {
                modes.put(segment.getPath().toUri().getPath(), mode(segment));
            }
        }
        Path manifest = ((FileStateHandle) last.getMetaDataStateHandle()).getFilePath();
        modes.put(
                manifest.toUri().getPath(),
                mode(hadoopFs.getFileStatus(new org.apache.hadoop.fs.Path(manifest.toUri().getPath()))));

        assertThat(modes.keySet())
                .as("files below the log directory")
                .anyMatch(p -> p.endsWith(".seg") && !p.contains("-run-"))
                .anyMatch(p -> p.contains("-run-"));
        assertThat(modes)
                .allSatisfy(
                        (path, mode) ->
                                assertThat(mode)
                                        .as(path)
                                        .isEqualTo(
                                                path.endsWith(".seg") || path.equals(manifest.toUri().getPath())
                                                        ? expectedFiles
                                                        : expectedDirectories));
        assertRestores(backend, last);
    }

    @Test
    void onTheLocalFileSystemTheLogHasOwnerOnlyPermissions() throws Exception {
        java.nio.file.Path log = tmp.resolve("local/state/log");
        AppendLogStateBackend backend = backend(log.toUri().toString(), "", "");
        IncrementalRemoteKeyedStateHandle last =
                writeWithCompaction(backend, tmp.resolve("local/checkpoints").toUri().toString());

        Map<String, String> modes;
        try (Stream<java.nio.file.Path> paths = Files.walk(tmp.resolve("local/state"))) {
            modes =
                    paths.collect(
                            Collectors.toMap(
                                    p -> tmp.relativize(p).toString(),
                                    p -> {
                                        try {
                                            return PosixFilePermissions.toString(
                                                    Files.getPosixFilePermissions(p));
                                        } catch (java.io.IOException e) {
                                            throw new java.io.UncheckedIOException(e);
                                        }
                                    },
                                    (a, b) -> a,
                                    TreeMap::new));
        }
        assertThat(modes.keySet()).anyMatch(p -> p.contains("-run-"));
        assertThat(modes)
                .allSatisfy(
                        (path, mode) ->
                                assertThat(mode)
                                        .as(path)
                                        .isEqualTo(path.endsWith(".seg") ? "rw-------" : "rwx------"));
        assertRestores(backend, last);
    }

    /** A backend whose permission options are left at their defaults where empty. */
    private static AppendLogStateBackend backend(String logDir, String directories, String files) {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, logDir);
        // Small segments and an eager compactor: the second checkpoint leaves a run.
        config.setString(AppendLogOptions.SEGMENT_SIZE.key(), "1kb");
        config.set(AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO, 0.1);
        if (!directories.isEmpty()) {
            config.set(AppendLogOptions.DIRECTORY_PERMISSIONS, directories);
            config.set(AppendLogOptions.FILE_PERMISSIONS, files);
        }
        return new AppendLogStateBackend()
                .configure(config, StatePermissionsTest.class.getClassLoader());
    }

    /**
     * Three checkpoints, the second rewriting half the keys, so that compaction writes a run,
     * which the third takes up; manifests go to files of their own (memory threshold 0).
     */
    private static IncrementalRemoteKeyedStateHandle writeWithCompaction(
            AppendLogStateBackend stateBackend, String checkpoints) throws Exception {
        SharedStateRegistry registry = BackendHarness.newRegistry();
        Path dir = new Path(checkpoints);
        CheckpointStreamFactory streams =
                new FsCheckpointStreamFactory(
                        FileSystem.get(URI.create(checkpoints)),
                        new Path(dir, "chk"),
                        new Path(dir, "shared"),
                        0,
                        4096);
        try (BackendHarness harness = BackendHarness.open(stateBackend, registry)) {
            IncrementalRemoteKeyedStateHandle last = null;
            for (long checkpoint = 1; checkpoint <= 3; checkpoint++) {
                for (int key = 0; key < (checkpoint == 1 ? KEYS : KEYS / 2); key++) {
                    harness.put(key, checkpoint * 10_000 + key);
                }
                last = BackendHarness.written(harness.snapshot(checkpoint, streams));
                harness.confirm(last, checkpoint);
                harness.awaitCompaction();
            }
            assertThat(BackendHarness.compactionPasses(harness.backend)).isPositive();
            return last;
        }
    }

    private static void assertRestores(
            AppendLogStateBackend stateBackend, IncrementalRemoteKeyedStateHandle last)
            throws Exception {
        BackendHarness.assertRestores(
                stateBackend,
                BackendHarness.newRegistry(),
                last,
                KEYS,
                key -> (key < KEYS / 2 ? 30_000L : 10_000L) + key);
    }

    private static String mode(FileStatus status) {
        return status.getPermission().toString();
    }
}
