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

import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;

import java.io.File;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.net.URI;
import java.util.List;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;

/**
 * The local file system under the scheme {@code held://}, for what runs while the deletion of a
 * log segment hangs, as an HDFS call can: a test holds the next deletion of a segment file until
 * it releases it or the hold times out. It records every segment deletion (with the subtask's
 * committed end just before it) and counts the commit markers written.
 */
public final class HeldDeletesFileSystem extends LocalFileSystem {

    public static final String SCHEME = "held";

    /** Segment deletions done, in order. */
    static final List<Deletion> DELETIONS = new CopyOnWriteArrayList<>();
    /** Commit markers written (renamed into place). */
    static final AtomicInteger COMMITS = new AtomicInteger();

    private static final AtomicReference<Hold> NEXT = new AtomicReference<>();

    /** The held:// URI of a local directory. */
    static String uriOf(File dir) {
        return SCHEME + "://" + dir.getAbsoluteFile().toURI().getPath();
    }

    /** Forgets what was recorded. */
    static void reset() {
        DELETIONS.clear();
        COMMITS.set(0);
        NEXT.set(null);
    }

    /** Holds the next segment deletion, of any thread, for at most {@code maxMillis}. */
    static Hold holdNextSegmentDeletion(long maxMillis) {
        Hold hold = new Hold(maxMillis);
        NEXT.set(hold);
        return hold;
    }

    @Override
    public URI getUri() {
        return URI.create(SCHEME + ":///");
    }

    @Override
    public boolean delete(Path f, boolean recursive) throws IOException {
        if (LogWriter.sequenceOf(f.getName()) < 0) {
            return super.delete(f, recursive);
        }
        Hold hold = NEXT.getAndSet(null);
        if (hold != null) {
            hold.block(f);
        }
        LogPosition committed = PersistedStream.committedEnd(this, f.getParent()).orElse(null);
        boolean deleted = super.delete(f, recursive);
        DELETIONS.add(new Deletion(f, committed, System.nanoTime()));
        return deleted;
    }

    @Override
    public boolean rename(Path src, Path dst) throws IOException {
        boolean renamed = super.rename(src, dst);
        if (renamed && dst.getName().startsWith("commit-")) {
            COMMITS.incrementAndGet();
        }
        return renamed;
    }

    /** A segment deleted, and the end of its stream's latest commit just before (null: none). */
    static final class Deletion {
        final Path segment;
        final LogPosition committedEnd;
        final long nanoTime;

        Deletion(Path segment, LogPosition committedEnd, long nanoTime) {
            this.segment = segment;
            this.committedEnd = committedEnd;
            this.nanoTime = nanoTime;
        }

        @Override
        public String toString() {
            return segment.getParent().getName() + "/" + segment.getName() + " (committed end " + committedEnd + ")";
        }
    }

    /** One held deletion. */
    static final class Hold {
        private final long maxMillis;
        private final CountDownLatch reached = new CountDownLatch(1);
        private final CountDownLatch released = new CountDownLatch(1);
        private volatile String thread;
        private volatile boolean interrupted;

        private Hold(long maxMillis) {
            this.maxMillis = maxMillis;
        }

        private void block(Path segment) throws InterruptedIOException {
            thread = Thread.currentThread().getName();
            reached.countDown();
            try {
                released.await(maxMillis, TimeUnit.MILLISECONDS);
            } catch (InterruptedException e) {
                interrupted = true;
                Thread.currentThread().interrupt();
                throw new InterruptedIOException("held deletion of " + segment + " interrupted");
            }
        }

        boolean awaitReached(long seconds) throws InterruptedException {
            return reached.await(seconds, TimeUnit.SECONDS);
        }

        void release() {
            released.countDown();
        }

        /** The name of the thread that the hold blocked. */
        String thread() {
            return thread;
        }

        boolean wasInterrupted() {
            return interrupted;
        }
    }
}
