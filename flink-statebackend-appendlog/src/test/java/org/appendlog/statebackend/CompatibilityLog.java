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

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.memory.ByteStreamStateHandle;

import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.List;
import java.util.Properties;
import java.util.UUID;

/**
 * A log that a released version of the backend wrote, kept in the test resources
 * ({@code compatibility/<name>/}) so that every later version is tested to restore it: the
 * manifest of its last checkpoint ({@code manifest}), the segments that checkpoint refers to, and
 * {@code checkpoint.properties} with what Flink's handle of the checkpoint held besides.
 *
 * <p>The state is one value state {@code counts} ({@link BackendHarness#COUNTS}), written in three
 * checkpoints so that the last one's log holds several batches in several segments, values
 * overwritten and removed ones, and (in logs kept from format 4 on) a full batch: see
 * {@link #expected}. {@link #main} writes such a log; when the
 * format changes, add a directory written by the new version and keep the old ones.
 */
public final class CompatibilityLog {

    /** Keys 0 to KEYS - 1 are written; those absent from the state are null in {@link #expected}. */
    public static final int KEYS = 2_100;

    private static final String PROPERTIES = "checkpoint.properties";
    private static final String MANIFEST = "manifest";

    final UUID backendId;
    final long checkpointId;
    final List<String> segments;
    /** The compression it was written with; a restore writes its own batches so too. */
    final BatchCompression compression;
    final String writtenBy;

    private CompatibilityLog(
            UUID backendId,
            long checkpointId,
            List<String> segments,
            BatchCompression compression,
            String writtenBy) {
        this.backendId = backendId;
        this.checkpointId = checkpointId;
        this.segments = segments;
        this.compression = compression;
        this.writtenBy = writtenBy;
    }

    /** The value of {@code key} in the last checkpoint, or null if the key has none. */
    public static Long expected(int key) {
        if (key < 100) {
            return (long) -key;
        } else if (key < 1_000) {
            return 2L * key + 1;
        } else if (key < 1_500) {
            return (long) key;
        } else if (key < 2_000) {
            return null;
        }
        return 3L * key;
    }

    /**
     * Checkpoint 1 puts keys 0..1999; 2 overwrites 0..999 and removes 1500..1999, as a full
     * checkpoint (so the log holds a full batch too); 3 adds the rest.
     */
    private static IncrementalRemoteKeyedStateHandle write(BackendHarness harness) throws Exception {
        for (int key = 0; key < 2_000; key++) {
            harness.put(key, key);
        }
        harness.checkpoint(1);
        for (int key = 0; key < 1_000; key++) {
            harness.put(key, 2L * key + 1);
        }
        for (int key = 1_500; key < 2_000; key++) {
            harness.remove(key);
        }
        harness.fullCheckpoint(2);
        for (int key = 2_000; key < KEYS; key++) {
            harness.put(key, 3L * key);
        }
        for (int key = 0; key < 100; key++) {
            harness.put(key, -key);
        }
        return harness.checkpoint(3);
    }

    /** Reads the log kept in {@code directory}. */
    static CompatibilityLog read(java.nio.file.Path directory) throws IOException {
        Properties properties = new Properties();
        try (InputStream in = Files.newInputStream(directory.resolve(PROPERTIES))) {
            properties.load(in);
        }
        return new CompatibilityLog(
                UUID.fromString(properties.getProperty("backend-id")),
                Long.parseLong(properties.getProperty("checkpoint-id")),
                List.of(properties.getProperty("segments").split(",")),
                BatchCompression.valueOf(properties.getProperty("compression").toUpperCase()),
                properties.getProperty("written-by"));
    }

    /** The handle Flink would restore the kept checkpoint with, its files in {@code directory}. */
    IncrementalRemoteKeyedStateHandle handle(java.nio.file.Path directory) throws IOException {
        List<HandleAndLocalPath> shared = new ArrayList<>();
        for (String segment : segments) {
            shared.add(HandleAndLocalPath.of(fileHandle(directory.resolve(segment)), segment));
        }
        StreamStateHandle manifest = fileHandle(directory.resolve(MANIFEST));
        return new IncrementalRemoteKeyedStateHandle(
                backendId,
                KeyGroupRange.of(0, BackendHarness.MAX_PARALLELISM - 1),
                checkpointId,
                shared,
                List.of(),
                manifest,
                manifest.getStateSize());
    }

    private static FileStateHandle fileHandle(java.nio.file.Path file) throws IOException {
        return new FileStateHandle(new Path(file.toUri()), Files.size(file));
    }

    /** The backend that wrote and that restores the kept logs: small segments, no compaction. */
    static AppendLogStateBackend backend(java.nio.file.Path logDir, BatchCompression compression) {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, logDir.toUri().toString());
        config.set(AppendLogOptions.COMPRESSION, compression);
        config.setString(AppendLogOptions.SEGMENT_SIZE.key(), "8kb");
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        return new AppendLogStateBackend()
                .configure(config, CompatibilityLog.class.getClassLoader());
    }

    /**
     * Writes a log with {@code args[1]} compression ({@code lz4} or {@code none}) into directory
     * {@code args[0]}, described as written by {@code args[2]}. Run from the module, after {@code
     * test-compile}, with {@code ../mvnw -B -q org.codehaus.mojo:exec-maven-plugin:3.5.0:java
     * -Dexec.classpathScope=test -Dexec.mainClass=org.appendlog.statebackend.CompatibilityLog
     * "-Dexec.args=src/test/resources/compatibility/NAME lz4 'AppendLog VERSION (COMMIT)'"}.
     */
    public static void main(String[] args) throws Exception {
        java.nio.file.Path target = java.nio.file.Paths.get(args[0]);
        BatchCompression compression = BatchCompression.valueOf(args[1].toUpperCase());
        java.nio.file.Path logDir = Files.createTempDirectory("compatibility-log");
        IncrementalRemoteKeyedStateHandle checkpoint;
        try (BackendHarness harness =
                BackendHarness.open(backend(logDir, compression), BackendHarness.newRegistry())) {
            checkpoint = write(harness);
        }
        Files.createDirectories(target);
        List<String> segments = new ArrayList<>();
        for (HandleAndLocalPath segment : checkpoint.getSharedState()) {
            segments.add(segment.getLocalPath());
            FileStateHandle file = (FileStateHandle) segment.getHandle();
            copy(file, target.resolve(segment.getLocalPath()));
        }
        Files.write(
                target.resolve(MANIFEST),
                ((ByteStreamStateHandle) checkpoint.getMetaDataStateHandle()).getData());
        Properties properties = new Properties();
        properties.setProperty("backend-id", checkpoint.getBackendIdentifier().toString());
        properties.setProperty("checkpoint-id", Long.toString(checkpoint.getCheckpointId()));
        properties.setProperty("segments", String.join(",", segments));
        properties.setProperty("compression", compression.name().toLowerCase());
        properties.setProperty("written-by", args[2]);
        try (OutputStream out = Files.newOutputStream(target.resolve(PROPERTIES))) {
            properties.store(out, "A checkpoint of the appendlog backend, kept to test that later versions restore it");
        }
    }

    /** Copies the segment as far as the checkpoint refers to it. */
    private static void copy(FileStateHandle file, java.nio.file.Path target) throws IOException {
        try (InputStream in = file.openInputStream();
                OutputStream out = Files.newOutputStream(target)) {
            in.transferTo(out);
        }
    }
}
