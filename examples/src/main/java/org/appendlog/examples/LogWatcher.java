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
