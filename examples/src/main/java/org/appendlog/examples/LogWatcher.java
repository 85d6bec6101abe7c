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

package org.appendlog.examples;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** Samples the segment files of a local state log while a job runs, to report its peak size. */
final class LogWatcher {

    private final Path log;
    private final Thread thread;
    private volatile boolean running = true;
    private volatile long peakSegments;
    private volatile long peakBytes;

    private LogWatcher(Path log) {
        this.log = log;
        this.thread = new Thread(this::run, "state-log-watcher");
        this.thread.setDaemon(true);
    }

    static LogWatcher start(Path log) {
        LogWatcher watcher = new LogWatcher(log);
        watcher.thread.start();
        return watcher;
    }

    private void run() {
        while (running) {
            List<Path> files = segments(log).collect(Collectors.toList());
            long bytes = files.stream().mapToLong(p -> p.toFile().length()).sum();
            peakSegments = Math.max(peakSegments, files.size());
            peakBytes = Math.max(peakBytes, bytes);
            try {
                Thread.sleep(100);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    void stop() throws InterruptedException {
        running = false;
        thread.join();
    }

    long peakSegments() {
        return peakSegments;
    }

    long peakBytes() {
        return peakBytes;
    }

    static Stream<Path> segments(Path log) {
        if (!Files.isDirectory(log)) {
            return Stream.empty();
        }
        try (Stream<Path> files = Files.walk(log)) {
            return files.filter(p -> p.toString().endsWith(".seg"))
                    .collect(Collectors.toList())
                    .stream();
        } catch (IOException | UncheckedIOException e) {
            // Segments come and go while the job runs; a vanished file ends this sample.
            return Stream.empty();
        }
    }
}
