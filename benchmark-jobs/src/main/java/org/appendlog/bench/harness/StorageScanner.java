package org.appendlog.bench.harness;

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.IOException;
import java.util.HashMap;
import java.util.Map;

/**
 * Measures the bytes a run wrote to its storage by looking at the storage itself, not at what the
 * backend reports: a thread lists the run's storage directory every {@code periodMillis} and
 * remembers the largest size each file ever had. Written bytes are the sum over all files seen
 * (files created and deleted between two scans are missed; checkpoint files live at least one
 * checkpoint interval). Also tells the bytes present at the last scan.
 */
final class StorageScanner implements AutoCloseable {

    private final Path root;
    private final long periodMillis;
    private final Map<String, Long> largestSize = new HashMap<>();
    private final Thread thread;
    private volatile boolean running = true;
    private long present;

    StorageScanner(String rootUri, long periodMillis) {
        this.root = new Path(rootUri);
        this.periodMillis = periodMillis;
        this.thread = new Thread(this::loop, "storage-scanner");
        this.thread.setDaemon(true);
    }

    void start() {
        thread.start();
    }

    private void loop() {
        while (running) {
            scan();
            try {
                Thread.sleep(periodMillis);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private synchronized void scan() {
        try {
            FileSystem fs = root.getFileSystem();
            long total = 0;
            if (fs.exists(root)) {
                total = scan(fs, root);
            }
            present = total;
        } catch (IOException e) {
            // files vanish while being listed (subsumed checkpoints): the next scan sees the rest
        }
    }

    private long scan(FileSystem fs, Path dir) throws IOException {
        long total = 0;
        FileStatus[] children = fs.listStatus(dir);
        if (children == null) {
            return 0;
        }
        for (FileStatus child : children) {
            if (child.isDir()) {
                total += scan(fs, child.getPath());
            } else {
                total += child.getLen();
                largestSize.merge(child.getPath().toString(), child.getLen(), Math::max);
            }
        }
        return total;
    }

    /** Stops scanning after one last scan. */
    @Override
    public void close() throws InterruptedException {
        running = false;
        thread.interrupt();
        thread.join();
        scan();
    }

    synchronized long writtenBytes() {
        long total = 0;
        for (long size : largestSize.values()) {
            total += size;
        }
        return total;
    }

    synchronized long presentBytes() {
        return present;
    }
}
