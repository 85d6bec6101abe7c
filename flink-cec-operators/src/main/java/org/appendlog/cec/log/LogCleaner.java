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

package org.appendlog.cec.log;

import org.apache.flink.util.concurrent.ExecutorThreadFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.io.IOException;
import java.util.List;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicReference;

/**
 * Applies {@link LogRetention} to a subtask's streams on a thread of its own (Kafka's log
 * cleaner), so that the directory listings and deletions, a round trip each on HDFS, never stall
 * the task thread. The operator requests a run after each completed checkpoint; a request not
 * started yet is replaced by a newer one, whose horizons are at or after its own, so only the
 * newest completed checkpoint's horizons are ever applied. A failed run is logged and the next
 * request tries again.
 *
 * <p>{@link #finish()} and {@link #close()} return only once the thread has ended: a restore of
 * the same subtask, which may withdraw or commit the streams again and reads them, must not meet a
 * deletion of the attempt it replaces.
 */
public final class LogCleaner implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(LogCleaner.class);

    /** How long {@link #close()} lets a running or requested run go on before it interrupts it. */
    private static final long GRACE_MILLIS = 1_000;
    /** How often {@link #finish()} and {@link #close()} log while the thread has not ended. */
    private static final long STILL_WAITING_SECONDS = 10;

    private final String owner;
    private final ExecutorService thread;
    private final AtomicReference<Request> pending = new AtomicReference<>();

    /** @param owner names the operator's subtask, in the thread's name and in log messages */
    public LogCleaner(String owner) {
        this.owner = owner;
        this.thread = Executors.newSingleThreadExecutor(new ExecutorThreadFactory("cec-log-cleaner " + owner));
    }

    /**
     * Requests retention of each stream up to its horizon, which checkpoint {@code checkpointId}
     * allows now that it completed.
     *
     * @param newestTimestamp the stream time that retention ages segments against
     */
    public void request(long checkpointId, long newestTimestamp, List<Horizon> horizons) {
        if (pending.getAndSet(new Request(checkpointId, newestTimestamp, horizons)) == null) {
            thread.execute(this::runPending);
        }
    }

    private void runPending() {
        Request request = pending.getAndSet(null);
        if (request == null) {
            return;
        }
        for (Horizon stream : request.horizons) {
            if (Thread.currentThread().isInterrupted()) {
                return; // closing
            }
            try {
                stream.retention.enforce(stream.horizon, request.newestTimestamp);
            } catch (IOException | RuntimeException e) {
                if (Thread.currentThread().isInterrupted()) {
                    LOG.info(
                            "{}: log retention in {} up to {} stopped by close", owner, stream.retention.directory(),
                            stream.horizon);
                    return;
                }
                LOG.warn(
                        "{} could not apply log retention in {} up to {} (checkpoint {}); it tries again after"
                                + " the next checkpoint",
                        owner, stream.retention.directory(), stream.horizon, request.checkpointId, e);
            }
        }
    }

    /**
     * Lets the requested runs end, then ends the thread: at the end of the input, so that the final
     * checkpoint's retention is applied; no restore can follow before the task ends.
     */
    public void finish() {
        thread.shutdown();
        awaitEnd(false);
    }

    /**
     * Lets a running or requested run go on for a moment, then interrupts it (a deletion in
     * progress ends, no other starts) and waits until the thread has ended, however long a file
     * system call takes to return: as long as the task thread would have waited for it.
     */
    @Override
    public void close() {
        thread.shutdown();
        boolean interrupted = false;
        try {
            if (thread.awaitTermination(GRACE_MILLIS, TimeUnit.MILLISECONDS)) {
                return;
            }
        } catch (InterruptedException e) {
            interrupted = true; // cancelled: stop the run at once
        }
        thread.shutdownNow();
        awaitEnd(interrupted);
    }

    private void awaitEnd(boolean interrupted) {
        while (true) {
            try {
                if (thread.awaitTermination(STILL_WAITING_SECONDS, TimeUnit.SECONDS)) {
                    break;
                }
                LOG.warn("{}: still waiting for log retention to end", owner);
            } catch (InterruptedException e) {
                interrupted = true;
            }
        }
        if (interrupted) {
            Thread.currentThread().interrupt();
        }
    }

    /** How far one stream's retention may delete: nothing at or after {@code horizon}. */
    public static final class Horizon {
        final LogRetention retention;
        final LogPosition horizon;

        public Horizon(LogRetention retention, LogPosition horizon) {
            this.retention = retention;
            this.horizon = horizon;
        }
    }

    private static final class Request {
        final long checkpointId;
        final long newestTimestamp;
        final List<Horizon> horizons;

        Request(long checkpointId, long newestTimestamp, List<Horizon> horizons) {
            this.checkpointId = checkpointId;
            this.newestTimestamp = newestTimestamp;
            this.horizons = horizons;
        }
    }
}
