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

package org.appendlog.statebackend.log;

import org.apache.flink.util.concurrent.ExecutorThreadFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.ThreadPoolExecutor;
import java.util.concurrent.TimeUnit;

/**
 * Closes the segments that the log is done appending to, one after the other, on a thread of its
 * own. A segment's batches were committed before it is handed over (the sync mode's guarantee
 * holds without the close), but closing a file on HDFS waits until the NameNode knows that its
 * last block is complete, and the client sleeps 400 ms before asking again whenever the DataNode
 * has not reported the block yet. Closed where the segment rolls, that wait fell into a
 * checkpoint's asynchronous phase; closed on dispose, into a failover.
 */
final class SegmentCloser {

    private static final Logger LOG = LoggerFactory.getLogger(SegmentCloser.class);
    /** How long the thread outlives its last close; none runs while nothing is to be closed. */
    private static final long IDLE_SECONDS = 10;

    private final ThreadPoolExecutor executor;

    SegmentCloser(String logName) {
        this.executor =
                new ThreadPoolExecutor(
                        0,
                        1,
                        IDLE_SECONDS,
                        TimeUnit.SECONDS,
                        new LinkedBlockingQueue<>(),
                        new ExecutorThreadFactory("appendlog-segment-closer " + logName));
    }

    /** Closes {@code segment} after those handed over before it; completes when it is closed. */
    CompletableFuture<Void> close(LogSegment segment) {
        try {
            return CompletableFuture.runAsync(() -> closeNow(segment), executor);
        } catch (RejectedExecutionException shutDown) {
            closeNow(segment);
            return CompletableFuture.completedFuture(null);
        }
    }

    /** Takes no more segments; those handed over are still closed. */
    void shutdown() {
        executor.shutdown();
    }

    private static void closeNow(LogSegment segment) {
        long start = System.nanoTime();
        try {
            segment.close();
            LOG.debug(
                    "Closed state log segment {} in {} ms",
                    segment.path,
                    (System.nanoTime() - start) / 1_000_000);
        } catch (Exception e) {
            if (deleted(segment)) {
                // The job ended or moved on, and Flink discarded the checkpoints that needed it.
                LOG.debug("State log segment {} was deleted while it was being closed", segment.path);
            } else {
                // Its batches were committed; a reader recovers the file's lease if it must.
                LOG.warn("Could not close state log segment {}", segment.path, e);
            }
        }
    }

    private static boolean deleted(LogSegment segment) {
        try {
            return !segment.path.getFileSystem().exists(segment.path);
        } catch (IOException unknown) {
            return false;
        }
    }
}
