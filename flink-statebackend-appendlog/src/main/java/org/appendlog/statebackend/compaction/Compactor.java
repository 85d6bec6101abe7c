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

package org.appendlog.statebackend.compaction;

import org.appendlog.statebackend.index.LogIndex;
import org.appendlog.statebackend.log.SegmentedLog;
import org.appendlog.statebackend.metrics.SuppliedCounter;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.KeyGroupRange;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.Closeable;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Predicate;

import static org.appendlog.statebackend.metrics.AppendLogMetrics.COMPACTIONS_FAILED;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.COMPACTIONS_RUN;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.COMPACTION_BYTES_READ;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.COMPACTION_BYTES_WRITTEN;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.LAST_COMPACTION_DURATION_MS;

/**
 * The log cleaner's thread: it runs one {@link CompactionPass} at a time on its own thread, never
 * the task's, and offers each result to the snapshot strategy, whose next checkpoint refers to the
 * run instead of the replaced batches. Flink's shared state registry then deletes the old segments
 * once no retained checkpoint needs them.
 */
public final class Compactor implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(Compactor.class);

    private final CompactionPass pass;
    private final SegmentedLog log;
    private final Predicate<CompactionResult> taker;
    private final ExecutorService thread;
    private final AtomicBoolean running = new AtomicBoolean();

    private final AtomicLong passes = new AtomicLong();
    private final AtomicLong bytesRead = new AtomicLong();
    private final AtomicLong bytesWritten = new AtomicLong();
    private volatile long lastDurationMillis;
    private final Counter failures;

    /**
     * @param taker receives each finished pass; returns false if the log moved on meanwhile and
     *     the result can no longer be used
     */
    public Compactor(
            CompactionSettings settings,
            SegmentedLog log,
            LogIndex index,
            KeyGroupRange owned,
            Predicate<CompactionResult> taker,
            MetricGroup metrics) {
        this.pass = new CompactionPass(settings, log, index, owned);
        this.log = log;
        this.taker = taker;
        this.thread =
                Executors.newSingleThreadExecutor(
                        r -> {
                            Thread t = new Thread(r, "appendlog-compactor " + owned);
                            t.setDaemon(true);
                            return t;
                        });
        metrics.counter(COMPACTIONS_RUN, new SuppliedCounter(passes::get));
        metrics.counter(COMPACTION_BYTES_READ, new SuppliedCounter(this::bytesRead));
        metrics.counter(COMPACTION_BYTES_WRITTEN, new SuppliedCounter(bytesWritten::get));
        this.failures = metrics.counter(COMPACTIONS_FAILED);
        metrics.gauge(LAST_COMPACTION_DURATION_MS, () -> lastDurationMillis);
    }

    /** Starts a pass over {@code input} unless one is running; returns at once. */
    public void maybeStart(CompactionInput input) {
        if (!running.compareAndSet(false, true)) {
            return;
        }
        thread.execute(
                () -> {
                    try {
                        runPass(input);
                    } catch (InterruptedException e) {
                        Thread.currentThread().interrupt();
                    } catch (Throwable t) {
                        // The log stays as it was: every checkpoint remains as restorable as before.
                        if (thread.isShutdown()) {
                            // close() interrupted the pass (the task was cancelled or fails over);
                            // the file system reports that as an error of its own.
                            LOG.info(
                                    "Compaction of the state log in {} stopped: the backend is closing ({})",
                                    log.directory(),
                                    t.toString());
                        } else {
                            failures.inc();
                            LOG.warn("Compaction of the state log in {} failed", log.directory(), t);
                        }
                    } finally {
                        running.set(false);
                    }
                });
    }

    public boolean isRunning() {
        return running.get();
    }

    /** Passes that finished, whether or not they found anything live. */
    public long passes() {
        return passes.get();
    }

    /** Log bytes that passes read: those of batches that hold a live record, or may a tombstone. */
    public long bytesRead() {
        return bytesRead.get();
    }

    private void runPass(CompactionInput input) throws Exception {
        long start = System.nanoTime();
        CompactionPass.Outcome outcome = pass.run(input);
        if (outcome == null) {
            return;
        }
        boolean taken = taker.test(outcome.result);
        passes.incrementAndGet();
        bytesRead.addAndGet(outcome.bytesRead);
        bytesWritten.addAndGet(outcome.bytesWritten());
        lastDurationMillis = (System.nanoTime() - start) / 1_000_000;
        LOG.info(
                "Compacted {} segment(s), {} batch(es), {} bytes read, into {} in {} ms{}",
                outcome.segments,
                outcome.result.replacedBatches().size(),
                outcome.bytesRead,
                outcome.result.run() == null
                        ? "nothing (no live records)"
                        : outcome.result.run(),
                lastDurationMillis,
                taken ? "" : "; the log moved on meanwhile, result dropped");
    }

    @Override
    public void close() {
        thread.shutdownNow();
        try {
            thread.awaitTermination(10, TimeUnit.SECONDS);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
        }
    }
}
