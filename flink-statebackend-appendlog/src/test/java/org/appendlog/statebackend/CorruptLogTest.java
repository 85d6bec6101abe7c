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

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Damaged logs and bad options fail loudly, naming what is wrong; nothing restores wrong. */
class CorruptLogTest {

    @TempDir Path logDir;

    private IncrementalRemoteKeyedStateHandle checkpointOf1000Keys(SharedStateRegistry registry)
            throws Exception {
        try (BackendHarness harness =
                BackendHarness.open(
                        new AppendLogStateBackend(logDir.toUri().toString()), registry)) {
            for (int key = 0; key < 1_000; key++) {
                harness.put(key, key);
            }
            return harness.checkpoint(1);
        }
    }

    private Path onlySegment() throws IOException {
        try (Stream<Path> files = Files.walk(logDir)) {
            List<Path> segments =
                    files.filter(p -> p.toString().endsWith(".seg")).collect(Collectors.toList());
            assertThat(segments).hasSize(1);
            return segments.get(0);
        }
    }

    private void restore(IncrementalRemoteKeyedStateHandle handle) throws Exception {
        BackendHarness.build(
                        new AppendLogStateBackend(logDir.toUri().toString()),
                        Collections.singletonList(handle))
                .dispose();
    }

    @Test
    void flippedByteInsideABatchIsReportedWithFileAndOffset() throws Exception {
        IncrementalRemoteKeyedStateHandle handle = checkpointOf1000Keys(BackendHarness.newRegistry());
        Path segment = onlySegment();
        long length = segment.toFile().length();
        for (long offset : new long[] {20, length / 2, length - 10}) {
            flip(segment, offset);
            assertThatThrownBy(() -> restore(handle))
                    .hasStackTraceContaining("Corrupt state log")
                    .hasStackTraceContaining(segment.getFileName().toString())
                    .hasStackTraceContaining("at offset");
            flip(segment, offset);
        }
        restore(handle);
    }

    @Test
    void truncatedSegmentIsReported() throws Exception {
        IncrementalRemoteKeyedStateHandle handle = checkpointOf1000Keys(BackendHarness.newRegistry());
        Path segment = onlySegment();
        try (RandomAccessFile file = new RandomAccessFile(segment.toFile(), "rw")) {
            file.setLength(file.length() / 2);
        }
        assertThatThrownBy(() -> restore(handle))
                .hasStackTraceContaining(segment.getFileName().toString())
                .hasStackTraceContaining("at offset");
    }

    @Test
    void deletedSegmentIsReportedWithItsPath() throws Exception {
        IncrementalRemoteKeyedStateHandle handle = checkpointOf1000Keys(BackendHarness.newRegistry());
        Path segment = onlySegment();
        Files.delete(segment);
        assertThatThrownBy(() -> restore(handle))
                .hasStackTraceContaining(segment.getFileName().toString())
                .hasStackTraceContaining("missing");
    }

    @Test
    void badOptionsFailAtStartupNamingTheOption() {
        AppendLogStateBackendFactory factory = new AppendLogStateBackendFactory();
        ClassLoader cl = getClass().getClassLoader();

        Configuration noDir = new Configuration();
        assertThatThrownBy(() -> factory.createFromConfig(noDir, cl))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("state.backend.appendlog.dir")
                .hasMessageContaining("state.checkpoints.dir");

        assertBadOption(factory, "state.backend.appendlog.sync-mode", "fsync");
        assertBadOption(factory, "state.backend.appendlog.segment-size", "lots");
        assertBadOption(factory, "state.backend.appendlog.segment-size", "10b");
        assertBadOption(factory, "state.backend.appendlog.restore-parallelism", "0");
        assertBadOption(factory, "state.backend.appendlog.dir", "relative/without/scheme");

        Configuration fromCheckpointDir = new Configuration();
        fromCheckpointDir.setString("state.checkpoints.dir", logDir.toUri().toString());
        assertThat(factory.createFromConfig(fromCheckpointDir, cl).getSettings().logDirectory())
                .hasToString(new org.apache.flink.core.fs.Path(logDir.toUri().toString(), "appendlog").toString());
    }

    private void assertBadOption(AppendLogStateBackendFactory factory, String key, String value) {
        Configuration config = new Configuration();
        config.setString("state.backend.appendlog.dir", logDir.toUri().toString());
        config.setString(key, value);
        assertThatThrownBy(() -> factory.createFromConfig(config, getClass().getClassLoader()))
                .as("%s: %s", key, value)
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(key);
    }

    private static void flip(Path file, long offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int b = f.read();
            f.seek(offset);
            f.write(b ^ 0xFF);
        }
    }
}
