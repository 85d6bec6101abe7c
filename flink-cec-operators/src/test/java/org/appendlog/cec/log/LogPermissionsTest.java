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

package org.appendlog.cec.log;

import org.appendlog.cec.api.CecConfigOptions;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.testing.MiniHdfs;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import org.apache.hadoop.fs.FileStatus;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A subtask's log directory and its segment and time index files get the permissions of {@code
 * cec.log.directory-permissions} and {@code cec.log.file-permissions}, not those of the umask
 * (HDFS's default 022 gives 755 and 644); on HDFS and on the local file system.
 */
class LogPermissionsTest {

    @TempDir static File tmp;
    private static MiniHdfs hdfs;
    private static org.apache.hadoop.fs.FileSystem hadoopFs;

    @BeforeAll
    static void startHdfs() throws Exception {
        hdfs = new MiniHdfs(tmp.toPath().resolve("hdfs"));
        hadoopFs = hdfs.fileSystem();
    }

    @AfterAll
    static void stopHdfs() {
        if (hdfs != null) {
            hdfs.close();
        }
    }

    @ParameterizedTest(name = "directory {0}, files {1}")
    @CsvSource({"'', '', rwx------, rw-------", "750, 640, rwxr-x---, rw-r-----"})
    void onHdfs(String directoryMode, String fileMode, String expectedDirectory, String expectedFiles)
            throws Exception {
        String root = hdfs.root() + "/cec-" + (directoryMode.isEmpty() ? "default" : directoryMode);
        Path directory = writeSegments(root, directoryMode, fileMode);

        Map<String, String> modes = new TreeMap<>();
        org.apache.hadoop.fs.Path subtask = new org.apache.hadoop.fs.Path(directory.toUri().getPath());
        modes.put("subtask directory", hadoopFs.getFileStatus(subtask).getPermission().toString());
        for (FileStatus file : hadoopFs.listStatus(subtask)) {
            modes.put(file.getPath().getName(), file.getPermission().toString());
        }
        assertModes(modes, expectedDirectory, expectedFiles);
    }

    @Test
    void onTheLocalFileSystem() throws Exception {
        Path directory = writeSegments(new File(tmp, "local").toURI().toString(), "", "");

        Map<String, String> modes = new TreeMap<>();
        java.nio.file.Path subtask = new File(directory.toUri().getPath()).toPath();
        modes.put("subtask directory", PosixFilePermissions.toString(Files.getPosixFilePermissions(subtask)));
        try (var files = Files.list(subtask)) {
            for (java.nio.file.Path file : (Iterable<java.nio.file.Path>) files::iterator) {
                modes.put(
                        file.getFileName().toString(),
                        PosixFilePermissions.toString(Files.getPosixFilePermissions(file)));
            }
        }
        assertModes(modes, "rwx------", "rw-------");
    }

    /**
     * Writes 1000 records of subtask 0 into 4 KiB segments below {@code root}, with the permission
     * options set where not empty; returns the subtask's directory.
     */
    private static Path writeSegments(String root, String directoryMode, String fileMode)
            throws IOException {
        CecOptions.Builder options = CecOptions.builder(root);
        if (!directoryMode.isEmpty()) {
            options.set(CecConfigOptions.LOG_DIRECTORY_PERMISSIONS, directoryMode)
                    .set(CecConfigOptions.LOG_FILE_PERMISSIONS, fileMode);
        }
        Path directory = PersistedStream.subtaskDirectory(new Path(root), 0);
        FileSystem fs = directory.getFileSystem();
        fs.mkdirs(directory);
        try (LogWriter writer =
                new LogWriter(fs, directory, 0, 0, null, 4096, 256, options.build().logPermissions())) {
            for (int i = 0; i < 1000; i++) {
                byte[] payload = ("record-" + i).getBytes(StandardCharsets.UTF_8);
                writer.append(i, payload, payload.length);
            }
            writer.sync();
            assertThat(writer.sequence()).as("segments rolled at 4 KiB").isPositive();
        }
        return directory;
    }

    private static void assertModes(Map<String, String> modes, String directory, String files) {
        assertThat(modes.keySet())
                .as("the subtask's files")
                .anyMatch(name -> LogWriter.sequenceOf(name) > 0)
                .anyMatch(name -> name.endsWith(TimeIndex.SUFFIX));
        assertThat(modes)
                .allSatisfy(
                        (name, mode) ->
                                assertThat(mode)
                                        .as(name)
                                        .isEqualTo(name.equals("subtask directory") ? directory : files));
    }
}
