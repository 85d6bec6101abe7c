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

package org.appendlog.hbase.bench;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.CheckpointMetadataOutputStream;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.storage.FileSystemCheckpointStorage;

import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.appendlog.hbase.HBaseCheckpointStorageFactory;
import org.appendlog.hbase.HBaseCheckpointStorageOptions;
import org.appendlog.hbase.HBaseClusterExtension;
import org.appendlog.hbase.WalDurability;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

/**
 * Checkpoint write latency and throughput of the HBase checkpoint storage (per WAL durability)
 * against Flink's file system checkpoint storage, both on the same in-JVM HDFS (MiniDFSCluster,
 * which also holds HBase's WAL and HFiles).
 *
 * <p>A checkpoint here is what the storage sees from a job: several subtasks writing their state
 * streams at once, then the job manager writing {@code _metadata}. Latency is from creating the
 * checkpoint location until the metadata is finalized; throughput is state bytes over that time.
 * After each checkpoint its handles and location are discarded, as subsumption does.
 *
 * <p>Run: {@code ./mvnw -B -o -q -pl flink-hbase-checkpoint test-compile exec:exec}; optional
 * arguments (via {@code -Dbench.args="..."}): measured checkpoints per cell (default 10), warm-up
 * checkpoints (default 3).
 */
public final class CheckpointWriteBenchmark {

    private static final int KB = 1024;
    private static final int MB = 1024 * KB;

    /** Subtasks writing at the same time. */
    private static final int WRITERS = 4;

    private CheckpointWriteBenchmark() {}

    /** What one checkpoint writes: how many state streams of which size. */
    private static final class Shape {
        final String name;
        final int streams;
        final int streamSize;

        Shape(String name, int streams, int streamSize) {
            this.name = name;
            this.streams = streams;
            this.streamSize = streamSize;
        }

        long bytes() {
            return (long) streams * streamSize;
        }
    }

    public static void main(String[] args) throws Exception {
        int measured = args.length > 0 ? Integer.parseInt(args[0]) : 10;
        int warmUp = args.length > 1 ? Integer.parseInt(args[1]) : 3;
        List<Shape> shapes =
                Arrays.asList(
                        new Shape("many small: 64 x 64 KB", 64, 64 * KB),
                        new Shape("few large: 4 x 8 MB", 4, 8 * MB));

        HBaseTestingUtility hbase = HBaseClusterExtension.start();
        ExecutorService writers = Executors.newFixedThreadPool(WRITERS);
        try {
            String hdfs = hbase.getDFSCluster().getFileSystem().getUri().toString();
            String quorum = "localhost:" + hbase.getZkCluster().getClientPort();
            Map<String, CheckpointStorage> storages = new LinkedHashMap<>();
            for (WalDurability durability :
                    new WalDurability[] {WalDurability.SYNC_WAL, WalDurability.ASYNC_WAL, WalDurability.SKIP_WAL}) {
                storages.put("HBase " + durability, hbaseStorage(quorum, durability));
            }
            storages.put("FileSystem on HDFS", new FileSystemCheckpointStorage(hdfs + "/flink-checkpoints"));

            byte[] data = new byte[8 * MB];
            new Random(1).nextBytes(data);

            System.out.printf(
                    "%nCheckpoint writes, %d subtasks writing concurrently, %d measured checkpoints after %d warm-up%n%n",
                    WRITERS, measured, warmUp);
            System.out.printf(
                    "| %-24s | %-20s | %8s | %8s | %8s | %8s | %12s |%n",
                    "checkpoint", "storage", "p50 ms", "p90 ms", "max ms", "MB/s", "discard p50");
            System.out.println("|" + "-".repeat(26) + "|" + "-".repeat(22) + "|" + "-".repeat(10) + "|"
                    + "-".repeat(10) + "|" + "-".repeat(10) + "|" + "-".repeat(10) + "|" + "-".repeat(14) + "|");
            for (Shape shape : shapes) {
                for (Map.Entry<String, CheckpointStorage> storage : storages.entrySet()) {
                    Result result = run(storage.getValue(), shape, data, writers, measured, warmUp);
                    System.out.printf(
                            "| %-24s | %-20s | %8.1f | %8.1f | %8.1f | %8.1f | %9.1f ms |%n",
                            shape.name,
                            storage.getKey(),
                            result.latencyMillis(0.5),
                            result.latencyMillis(0.9),
                            result.latencyMillis(1.0),
                            result.megabytesPerSecond(shape.bytes()),
                            result.discardMillis(0.5));
                }
            }
            System.out.println();
        } finally {
            writers.shutdownNow();
            hbase.shutdownMiniCluster();
        }
        // HBase client and HDFS leave non-daemon threads behind.
        System.exit(0);
    }

    private static CheckpointStorage hbaseStorage(String quorum, WalDurability durability) {
        Configuration conf = new Configuration();
        conf.set(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, quorum);
        conf.set(HBaseCheckpointStorageOptions.TABLE, "bench_" + durability.name().toLowerCase());
        conf.set(HBaseCheckpointStorageOptions.DURABILITY, durability);
        return new HBaseCheckpointStorageFactory()
                .createFromConfig(conf, CheckpointWriteBenchmark.class.getClassLoader());
    }

    private static Result run(
            CheckpointStorage storage,
            Shape shape,
            byte[] data,
            ExecutorService writers,
            int measured,
            int warmUp)
            throws Exception {
        CheckpointStorageAccess access = storage.createCheckpointStorage(new JobID());
        access.initializeBaseLocationsForCheckpoint();
        Result result = new Result();
        for (long checkpoint = 1; checkpoint <= warmUp + measured; checkpoint++) {
            long start = System.nanoTime();
            CheckpointStorageLocation location = access.initializeLocationForCheckpoint(checkpoint);
            List<Future<StreamStateHandle>> pending = new ArrayList<>();
            for (int stream = 0; stream < shape.streams; stream++) {
                int offset = (stream * 4099) % (data.length - shape.streamSize + 1);
                pending.add(writers.submit(() -> writeStream(location, data, offset, shape.streamSize)));
            }
            List<StreamStateHandle> handles = new ArrayList<>();
            for (Future<StreamStateHandle> handle : pending) {
                handles.add(handle.get());
            }
            CompletedCheckpointStorageLocation completed = writeMetadata(location, handles);
            long written = System.nanoTime();

            // In Flink's order (CompletedCheckpoint#discard): state, metadata, location.
            for (StreamStateHandle handle : handles) {
                handle.discardState();
            }
            completed.getMetadataHandle().discardState();
            completed.disposeStorageLocation();
            long discarded = System.nanoTime();
            if (checkpoint > warmUp) {
                result.add(written - start, discarded - written);
            }
        }
        return result;
    }

    private static StreamStateHandle writeStream(
            CheckpointStorageLocation location, byte[] data, int offset, int size) throws Exception {
        CheckpointStateOutputStream out =
                location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE);
        // Serializers write in small pieces.
        for (int written = 0; written < size; written += 4 * KB) {
            out.write(data, offset + written, Math.min(4 * KB, size - written));
        }
        return out.closeAndGetHandle();
    }

    /** Stands in for Flink's metadata: one line per handle, about as large. */
    private static CompletedCheckpointStorageLocation writeMetadata(
            CheckpointStorageLocation location, List<StreamStateHandle> handles) throws Exception {
        try (CheckpointMetadataOutputStream out = location.createMetadataOutputStream()) {
            for (StreamStateHandle handle : handles) {
                out.write((handle + "\n").getBytes(StandardCharsets.UTF_8));
            }
            return out.closeAndFinalizeCheckpoint();
        }
    }

    private static final class Result {
        private final List<Long> latencies = new ArrayList<>();
        private final List<Long> discards = new ArrayList<>();

        void add(long latencyNanos, long discardNanos) {
            latencies.add(latencyNanos);
            discards.add(discardNanos);
        }

        double latencyMillis(double quantile) {
            return quantileMillis(latencies, quantile);
        }

        double discardMillis(double quantile) {
            return quantileMillis(discards, quantile);
        }

        double megabytesPerSecond(long bytesPerCheckpoint) {
            long totalNanos = latencies.stream().mapToLong(Long::longValue).sum();
            return (double) bytesPerCheckpoint * latencies.size() / MB / (totalNanos / 1e9);
        }

        private static double quantileMillis(List<Long> nanos, double quantile) {
            long[] sorted = nanos.stream().mapToLong(Long::longValue).sorted().toArray();
            int index = (int) Math.ceil(quantile * sorted.length) - 1;
            return sorted[Math.max(0, index)] / 1e6;
        }
    }
}
