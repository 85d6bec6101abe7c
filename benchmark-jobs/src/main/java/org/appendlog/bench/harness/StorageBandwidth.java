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

package org.appendlog.bench.harness;

import org.apache.flink.api.common.JobID;
import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.StreamStateHandle;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Random;

/**
 * A storage's raw sequential write bandwidth, the upper bound for what any checkpoint can write
 * per second: {@code megabytes} written in 1 MiB buffers and made durable, either as one file
 * through Flink's {@link FileSystem} (synced), or as one exclusive checkpoint stream of a
 * {@link CheckpointStorage} (returned when the storage acknowledged every byte).
 */
final class StorageBandwidth {

    private StorageBandwidth() {}

    /** MB/s for a file under {@code dirUri}. */
    static double ofFile(String dirUri, int megabytes) throws IOException {
        Path file = new Path(dirUri, "bandwidth-probe");
        FileSystem fs = file.getFileSystem();
        byte[] buffer = probeBuffer();
        long start = System.nanoTime();
        try (FSDataOutputStream out = fs.create(file, FileSystem.WriteMode.OVERWRITE)) {
            write(out, buffer, megabytes);
            out.sync();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        fs.delete(file, false);
        return megabytes / seconds;
    }

    /** MB/s for a stream of checkpoint 1 of a new job on {@code storage}. */
    static double ofCheckpointStream(CheckpointStorage storage, int megabytes) throws IOException {
        CheckpointStorageAccess access = storage.createCheckpointStorage(new JobID());
        access.initializeBaseLocationsForCheckpoint();
        CheckpointStorageLocation location = access.initializeLocationForCheckpoint(1);
        byte[] buffer = probeBuffer();
        try {
            long start = System.nanoTime();
            StreamStateHandle handle;
            try (CheckpointStateOutputStream out =
                    location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE)) {
                write(out, buffer, megabytes);
                handle = out.closeAndGetHandle();
            }
            double seconds = (System.nanoTime() - start) / 1e9;
            if (handle.getStateSize() != megabytes * 1_000_000L) {
                throw new IOException("The bandwidth probe stored " + handle.getStateSize()
                        + " bytes instead of " + megabytes * 1_000_000L + " (" + handle + ")");
            }
            handle.discardState();
            return megabytes / seconds;
        } catch (Exception e) {
            throw e instanceof IOException ? (IOException) e : new IOException(e);
        } finally {
            location.disposeOnFailure();
        }
    }

    private static byte[] probeBuffer() {
        byte[] buffer = new byte[1 << 20];
        new Random(1).nextBytes(buffer);
        return buffer;
    }

    private static void write(OutputStream out, byte[] buffer, int megabytes) throws IOException {
        long bytes = (long) megabytes * 1_000_000;
        for (long written = 0; written < bytes; written += buffer.length) {
            out.write(buffer, 0, (int) Math.min(buffer.length, bytes - written));
        }
    }
}
