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

import org.appendlog.statebackend.faults.ReliabilityLog;
import org.appendlog.statebackend.log.ObjectStoreDetector;
import org.appendlog.testing.S3Server;

import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemKind;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The backend on a real S3 API (s3proxy, through Flink's {@code flink-s3-fs-hadoop} plugin), where
 * an object exists only once its stream is closed: every object a checkpoint names must exist,
 * whole, when the checkpoint is acknowledged, and compaction keeps the number of objects bounded.
 */
class ObjectStoreTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("object-store");

    @RegisterExtension static final MiniClusterExtension CLUSTER = MiniClusterJobs.cluster();

    @TempDir static java.nio.file.Path tmp;
    private static S3Server s3;

    @BeforeAll
    static void startS3() throws Exception {
        s3 = S3Server.start(S3Server.s3proxyJar(), tmp);
        s3.loadS3Plugin();
    }

    @AfterAll
    static void stopS3() throws Exception {
        S3Server.unloadS3Plugin();
        if (s3 != null) {
            s3.close();
        }
    }

    /**
     * Six checkpoints that update overlapping keys; after each is acknowledged (its handle
     * registered, as the JobManager does on the acknowledgement) and before the backend learns
     * that it completed, every object its handles name is in the bucket with at least the named
     * length. The last restores exactly, read back from the bucket.
     */
    @Test
    void everyObjectACheckpointNamesExistsWhenItIsAcknowledged() throws Exception {
        AppendLogStateBackend stateBackend = backend("acknowledged", new Configuration());
        SharedStateRegistry registry = BackendHarness.newRegistry();
        IncrementalRemoteKeyedStateHandle last = null;
        int keys = 60;
        try (BackendHarness harness = BackendHarness.open(stateBackend, registry)) {
            for (long id = 1; id <= 6; id++) {
                for (int key = (int) id * 5; key < keys; key++) {
                    harness.put(key, id * 1000 + key);
                }
                last = BackendHarness.written(harness.snapshot(id, manifests("acknowledged")));
                harness.acknowledge(last, id);
                List<String> named = assertNamedObjectsExist(last);
                RELIABILITY.record(
                        "checkpoint " + id + " acknowledged, before the backend is told it completed",
                        "all " + named.size() + " objects it names are in the bucket, whole");
                harness.complete(id);
            }
        }
        BackendHarness.assertRestores(
                stateBackend,
                registry,
                last,
                keys,
                key -> key < 5 ? null : (long) Math.min(6, key / 5) * 1000 + key);
        RELIABILITY.record(
                "restore of checkpoint 6 from the bucket", "exact values of all " + keys + " keys");
    }

    /**
     * Twelve checkpoints of new keys only: no record ever dies, and the batches are large enough
     * that their index is not half of them, so the dirty ratio never calls for compaction; the
     * count of sealed segments does. Every handle names at most {@code
     * max-segments} segments, the bucket holds the compacted runs, and the last checkpoint
     * restores exactly from the runs and the segments after them.
     */
    @Test
    void compactionMergesSealedSegmentsAndHandlesStayWithinTheBound() throws Exception {
        int maxSegments = 4;
        Configuration options = new Configuration();
        options.set(AppendLogOptions.COMPACTION_MAX_SEGMENTS, maxSegments);
        AppendLogStateBackend stateBackend = backend("compacted", options);
        SharedStateRegistry registry = BackendHarness.newRegistry();
        IncrementalRemoteKeyedStateHandle last = null;
        int keysPerCheckpoint = 300;
        int checkpoints = 12;
        long passes;
        int mostSegments = 0;
        try (BackendHarness harness = BackendHarness.open(stateBackend, registry)) {
            for (long id = 1; id <= checkpoints; id++) {
                for (int i = 0; i < keysPerCheckpoint; i++) {
                    harness.put((int) (id - 1) * keysPerCheckpoint + i, id);
                }
                last = BackendHarness.written(harness.snapshot(id, manifests("compacted")));
                harness.acknowledge(last, id);
                int segments = assertNamedObjectsExist(last).size() - 1;
                assertThat(segments)
                        .as("segments that checkpoint %d names (compaction.max-segments)", id)
                        .isBetween(1, maxSegments);
                mostSegments = Math.max(mostSegments, segments);
                harness.complete(id);
                harness.awaitCompaction();
            }
            passes = BackendHarness.compactionPasses(harness.backend);
        }
        assertThat(passes).as("compaction passes").isGreaterThanOrEqualTo(checkpoints / maxSegments);
        assertThat(segmentNames(last)).anyMatch(name -> name.contains("-run-"));
        try (Stream<java.nio.file.Path> files = Files.walk(s3.bucketDir("compacted/log"))) {
            assertThat(files.map(f -> f.getFileName().toString()))
                    .as("objects in the bucket")
                    .anyMatch(name -> name.contains("-run-"));
        }
        int keys = checkpoints * keysPerCheckpoint;
        BackendHarness.assertRestores(
                stateBackend, registry, last, keys, key -> (long) key / keysPerCheckpoint + 1);
        RELIABILITY.record(
                checkpoints + " checkpoints of new keys only, compaction.max-segments: " + maxSegments,
                passes
                        + " compaction passes merged the sealed segments; every handle named at most "
                        + mostSegments
                        + " segments; the last restored all "
                        + keys
                        + " keys exactly from the bucket");
    }

    /**
     * A TaskManager killed without any close ({@code kill -9} of the JVM running the job, with its
     * log and checkpoints in the bucket) after five completed checkpoints: the job restored from
     * the latest checkpoint in the bucket counts every record exactly once.
     */
    @Test
    void aKilledTaskManagerRestoresFromItsLatestCheckpoint(
            @InjectClusterClient ClusterClient<?> client) throws Exception {
        long records = 20_000;
        String checkpoints = S3Server.uri("killed/checkpoints");
        String logDir = S3Server.uri("killed/log");
        List<String> command = new ArrayList<>();
        command.add(S3Server.javaExecutable());
        command.add("-Xmx512m");
        ManagementFactory.getRuntimeMXBean().getInputArguments().stream()
                .filter(arg -> arg.startsWith("--add-"))
                .forEach(command::add);
        command.addAll(
                List.of(
                        "-cp",
                        System.getProperty("java.class.path"),
                        CountingJobProcess.class.getName(),
                        S3Server.pluginsDir().toString(),
                        checkpoints,
                        logDir,
                        Long.toString(records),
                        "500"));
        s3.flinkConfig().toMap().forEach((key, value) -> command.add(key + "=" + value));
        java.nio.file.Path taskManagerLog = tmp.resolve("killed-taskmanager.log");
        Process taskManager =
                new ProcessBuilder(command).redirectError(taskManagerLog.toFile()).start();
        String jobId;
        long lastReported;
        try {
            BlockingQueue<String> lines = new LinkedBlockingQueue<>();
            Thread reader =
                    new Thread(
                            () -> {
                                try (BufferedReader out =
                                        new BufferedReader(
                                                new InputStreamReader(
                                                        taskManager.getInputStream(),
                                                        StandardCharsets.UTF_8))) {
                                    for (String line; (line = out.readLine()) != null; ) {
                                        lines.add(line);
                                    }
                                } catch (IOException ended) {
                                    // the process was killed
                                }
                            });
            reader.setDaemon(true);
            reader.start();
            jobId = null;
            lastReported = 0;
            long deadline = System.nanoTime() + MiniClusterJobs.TIMEOUT.toNanos();
            while (lastReported < 5) {
                String line = lines.poll(100, TimeUnit.MILLISECONDS);
                if (line == null) {
                    assertThat(taskManager.isAlive() && System.nanoTime() < deadline)
                            .as("the job process runs (its log: %s)", read(taskManagerLog))
                            .isTrue();
                } else if (line.startsWith("job ")) {
                    jobId = line.substring(4);
                } else if (line.startsWith("completed ")) {
                    lastReported = Long.parseLong(line.substring(10));
                }
            }
        } finally {
            taskManager.destroyForcibly().waitFor();
        }
        // The latest checkpoint whose metadata reached the bucket: all it names was acknowledged.
        java.nio.file.Path jobCheckpoints = s3.bucketDir("killed/checkpoints/" + jobId);
        long latest;
        try (Stream<java.nio.file.Path> dirs = Files.list(jobCheckpoints)) {
            latest =
                    dirs.filter(d -> Files.exists(d.resolve("_metadata")))
                            .map(d -> d.getFileName().toString())
                            .filter(name -> name.startsWith("chk-"))
                            .mapToLong(name -> Long.parseLong(name.substring(4)))
                            .max()
                            .orElse(0);
        }
        assertThat(latest).as("latest checkpoint in the bucket").isGreaterThanOrEqualTo(lastReported);

        CountingJob job = new CountingJob(records, 20_000);
        Configuration config =
                CountingJobProcess.retained(
                        CountingJob.withAppendLog(CountingJob.jobConfig(checkpoints), logDir));
        CountingJobRuns.Resumed resumed =
                CountingJobRuns.resumeToEnd(
                        client,
                        job,
                        config,
                        2,
                        SavepointRestoreSettings.forPath(
                                checkpoints + "/" + jobId + "/chk-" + latest));
        long restoredRecords = resumed.restored.values().stream().mapToLong(Long::longValue).sum();
        RELIABILITY.record(
                "the JVM running the job killed (kill -9) after checkpoint "
                        + lastReported
                        + " completed",
                "restored from checkpoint "
                        + latest
                        + " in the bucket ("
                        + restoredRecords
                        + " records counted in it); every key ended at its exact count");
    }

    /** Flink's S3 file system says it is an object store; others are known by their scheme. */
    @Test
    void objectStoresAreKnownByKindAndByScheme() throws Exception {
        Path s3Dir = new Path(S3Server.uri("detected"));
        FileSystem s3Fs = s3Dir.getFileSystem();
        assertThat(s3Fs.getKind()).isEqualTo(FileSystemKind.OBJECT_STORE);
        assertThat(ObjectStoreDetector.isObjectStore(s3Fs, s3Dir)).isTrue();
        FileSystem local = FileSystem.getLocalFileSystem();
        for (String uri :
                List.of(
                        "s3a://bucket/log",
                        "s3p://bucket/log",
                        "gs://bucket/log",
                        "abfss://container@account.dfs.core.windows.net/log",
                        "oss://bucket/log",
                        "wasb://container@account.blob.core.windows.net/log")) {
            assertThat(ObjectStoreDetector.isObjectStore(local, new Path(uri))).as(uri).isTrue();
        }
        for (String uri : List.of("file:///data/log", "hdfs://namenode:8020/log")) {
            assertThat(ObjectStoreDetector.isObjectStore(local, new Path(uri))).as(uri).isFalse();
        }
    }

    /**
     * {@code seal-every-batch} seals on any file system (a mounted bucket that looks like a
     * disk): three checkpoints name three segments, each closed at exactly the named length,
     * where an open segment would hold all three batches.
     */
    @Test
    void sealEveryBatchSealsOnAnyFileSystem() throws Exception {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, tmp.resolve("mounted-bucket").toUri().toString());
        config.set(AppendLogOptions.SEAL_EVERY_BATCH, true);
        AppendLogStateBackend stateBackend =
                new AppendLogStateBackend().configure(config, ObjectStoreTest.class.getClassLoader());
        IncrementalRemoteKeyedStateHandle last = null;
        try (BackendHarness harness =
                BackendHarness.open(stateBackend, BackendHarness.newRegistry())) {
            for (long id = 1; id <= 3; id++) {
                harness.put((int) id, id);
                last = harness.checkpoint(id);
            }
        }
        assertThat(last.getSharedState()).hasSize(3);
        for (HandleAndLocalPath segment : last.getSharedState()) {
            FileStateHandle handle = (FileStateHandle) segment.getHandle();
            assertThat(Files.size(Paths.get(handle.getFilePath().toUri())))
                    .as("bytes of %s", handle.getFilePath())
                    .isEqualTo(handle.getStateSize());
        }
    }

    private static String read(java.nio.file.Path file) throws IOException {
        return Files.exists(file) ? Files.readString(file) : "none";
    }

    private static AppendLogStateBackend backend(String prefix, Configuration options) {
        Configuration config = new Configuration(options);
        config.set(AppendLogOptions.LOG_DIR, S3Server.uri(prefix + "/log"));
        return new AppendLogStateBackend().configure(config, ObjectStoreTest.class.getClassLoader());
    }

    /** Flink's file-based checkpoint streams in the bucket: the manifests are objects too. */
    private static CheckpointStreamFactory manifests(String prefix) throws Exception {
        Path dir = new Path(S3Server.uri(prefix + "/checkpoints"));
        return new FsCheckpointStreamFactory(dir.getFileSystem(), dir, dir, 0, 4096);
    }

    /**
     * Checks that every object {@code handle} names (its segments and its manifest) is a file of
     * the blob store of at least the named length; returns their names.
     */
    private static List<String> assertNamedObjectsExist(IncrementalRemoteKeyedStateHandle handle)
            throws Exception {
        List<StreamStateHandle> named = new ArrayList<>();
        handle.getSharedState().forEach(shared -> named.add(shared.getHandle()));
        named.add(handle.getMetaDataStateHandle());
        List<String> names = new ArrayList<>();
        for (StreamStateHandle object : named) {
            assertThat(object)
                    .as("a handle of checkpoint %d", handle.getCheckpointId())
                    .isInstanceOf(FileStateHandle.class);
            Path path = ((FileStateHandle) object).getFilePath();
            java.nio.file.Path file = s3.objectFile(path);
            assertThat(file)
                    .as("object %s that checkpoint %d names", path, handle.getCheckpointId())
                    .exists();
            assertThat(Files.size(file))
                    .as("bytes of object %s that checkpoint %d names", path, handle.getCheckpointId())
                    .isGreaterThanOrEqualTo(object.getStateSize());
            names.add(path.getName());
        }
        return names;
    }

    private static List<String> segmentNames(IncrementalRemoteKeyedStateHandle handle) {
        return handle.getSharedState().stream()
                .map(HandleAndLocalPath::getLocalPath)
                .collect(Collectors.toList());
    }
}
