package org.appendlog.bench.harness;

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.IOException;
import java.util.Random;

/**
 * The storage's raw sequential write bandwidth through Flink's {@link FileSystem}: one file written
 * in 1 MiB buffers and synced, the upper bound for what any checkpoint can write per second.
 */
final class StorageBandwidth {

    private StorageBandwidth() {}

    /** Megabytes (10^6 bytes) per second for writing {@code megabytes} to a file under {@code dirUri}. */
    static double measure(String dirUri, int megabytes) throws IOException {
        Path file = new Path(dirUri, "bandwidth-probe");
        FileSystem fs = file.getFileSystem();
        byte[] buffer = new byte[1 << 20];
        new Random(1).nextBytes(buffer);
        long bytes = (long) megabytes * 1_000_000;
        long start = System.nanoTime();
        try (FSDataOutputStream out = fs.create(file, FileSystem.WriteMode.OVERWRITE)) {
            for (long written = 0; written < bytes; written += buffer.length) {
                out.write(buffer, 0, (int) Math.min(buffer.length, bytes - written));
            }
            out.sync();
        }
        double seconds = (System.nanoTime() - start) / 1e9;
        fs.delete(file, false);
        return bytes / 1e6 / seconds;
    }
}
