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

import java.io.IOException;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Measures the bytes a run wrote to its storage by looking at the storage itself, not at what the
 * backend reports: a thread lists the run's {@link StoredEntries} (its files, its table cells) every
 * {@code periodMillis} and remembers the largest size each entry ever had. Written bytes are the
 * sum over all entries seen (entries created and deleted between two scans are missed; checkpoint
 * data lives at least one checkpoint interval). Also tells the bytes present at the last scan.
 */
final class StorageScanner implements AutoCloseable {

    private final List<StoredEntries> contents;
    private final long periodMillis;
    private final Map<String, Long> largestSize = new HashMap<>();
    private final Thread thread;
    private volatile boolean running = true;
    private long present;

    StorageScanner(List<StoredEntries> contents, long periodMillis) {
        this.contents = contents;
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
        long[] total = {0};
        try {
            for (StoredEntries entries : contents) {
                entries.list(
                        (name, size) -> {
                            total[0] += size;
                            largestSize.merge(name, size, Math::max);
                        });
            }
            present = total[0];
        } catch (IOException e) {
            // entries vanish while being listed (subsumed checkpoints): the next scan sees the rest
        }
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
