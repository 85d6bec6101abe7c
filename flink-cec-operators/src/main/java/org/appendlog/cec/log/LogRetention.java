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

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Deletes the oldest segments of one subtask's stream, as Kafka's log retention does ({@code
 * retention.ms}, {@code retention.bytes}), but never what a restore or a reader of the committed
 * stream needs. A segment goes when it lies wholly before the horizon and either its newest record
 * is older than the retention time (measured against the stream's newest timestamp, not the
 * clock) or the directory holds more than the retention size. Deletion is by whole segments with
 * their time indexes, oldest first and in stream order: the first segment that may stay ends it.
 * Segments that are not on the stream (tails that failed attempts left behind) go once the
 * stream's first kept segment is newer than they are.
 *
 * <p>Before deleting, it writes the new {@link LogStart}, so that readers stop there and a crash
 * in the middle of the deletions leaves a readable stream (the next call deletes the rest).
 *
 * <p>Segment headers are immutable and a segment's extent on the stream is fixed once its
 * successor exists, so each segment's header and newest timestamp are read once. A call lists the
 * directory only when a segment may go: after a call that completed, nothing older than the
 * first segment it kept is left and only the stream's writer adds segments, so while that segment
 * is the horizon's own, or (without a size bound) its newest record is within the retention time,
 * a call costs no file system access but the headers of segments new since the last one.
 * Interrupted, a call stops before its next deletion.
 */
public final class LogRetention {

    /** A retention time or size that never deletes anything. */
    public static final long UNBOUNDED = Long.MAX_VALUE;

    private static final Logger LOG = LoggerFactory.getLogger(LogRetention.class);

    private final FileSystem fs;
    private final Path directory;
    private final long retentionMillis;
    private final long retentionBytes;
    private final Map<String, SegmentHeader> headers = new HashMap<>();
    private final Map<String, Long> newestTimestamps = new HashMap<>();
    /** The oldest segment the directory holds after the last call that completed; null before one. */
    @Nullable private String oldest;
    /** The stream's start as of that call. */
    @Nullable private LogStart knownStart;

    /**
     * @param retentionMillis how far behind the stream's newest timestamp a segment's newest record
     *     may be, or {@link #UNBOUNDED}
     * @param retentionBytes the bytes the directory may hold, or {@link #UNBOUNDED}
     */
    public LogRetention(FileSystem fs, Path directory, long retentionMillis, long retentionBytes) {
        this.fs = fs;
        this.directory = directory;
        this.retentionMillis = retentionMillis;
        this.retentionBytes = retentionBytes;
    }

    /**
     * Deletes the segments that are behind both {@code horizon} and the retention. The operator's
     * {@link LogCleaner} calls this after each completed checkpoint.
     *
     * @param horizon nothing at or after this position is deleted: the minimum of the position a
     *     restore replays from and the last committed end
     * @param newestTimestamp the newest timestamp in the stream (the operator's stream time), which
     *     the retention time is measured against
     * @return the number of segment files deleted
     */
    public int enforce(LogPosition horizon, long newestTimestamp) throws IOException {
        long cutoff = retentionMillis == UNBOUNDED ? Long.MIN_VALUE : saturatedMinus(newestTimestamp, retentionMillis);
        if (oldest != null && oldestStays(horizon, cutoff)) {
            return 0;
        }
        oldest = null; // until this call completes
        Map<String, Long> bytes = new HashMap<>();
        long total = 0;
        List<String> segments = new ArrayList<>();
        for (FileStatus file : DirectoryReads.list(fs, directory).orElse(Collections.emptyList())) {
            String name = file.getPath().getName();
            if (!file.isDir()) {
                bytes.put(name, file.getLen());
                total += file.getLen();
            }
            if (LogWriter.sequenceOf(name) >= 0) {
                segments.add(name);
            }
        }
        segments.sort(Comparator.comparingLong(LogWriter::sequenceOf).thenComparing(Comparator.naturalOrder()));
        LogStart start = LogStart.read(fs, directory).orElse(null);
        List<String> chain = chainBackFrom(horizon.segment(), start);

        long remaining = total;
        int deleted = 0; // segments[0, deleted) go: every one older than the first kept chain segment
        int kept = 0; // chain[kept] is the first chain segment that stays
        long newestDeleted = Long.MIN_VALUE;
        while (true) {
            long firstKept = LogWriter.sequenceOf(chain.get(kept));
            while (deleted < segments.size() && LogWriter.sequenceOf(segments.get(deleted)) < firstKept) {
                remaining -= sizeWithIndex(segments.get(deleted), bytes);
                deleted++;
            }
            if (kept == chain.size() - 1) {
                break; // the horizon's own segment stays
            }
            long newest = newestTimestamp(chain.get(kept), chain.get(kept + 1));
            if (!expired(newest, cutoff) && remaining <= retentionBytes) {
                break;
            }
            newestDeleted = newest;
            kept++;
        }
        if (kept > 0) {
            long earliest = newestDeleted == Long.MAX_VALUE ? Long.MAX_VALUE : newestDeleted + 1;
            if (start != null) {
                earliest = Math.max(earliest, start.earliestTimestamp());
            }
            start = new LogStart(chain.get(kept), earliest);
            checkNotInterrupted(start.toString());
            start.write(fs, directory);
        }
        for (String name : segments.subList(0, deleted)) {
            delete(name, sizeWithIndex(name, bytes), start, horizon);
        }
        this.oldest = chain.get(kept);
        this.knownStart = start;
        return deleted;
    }

    /**
     * Whether the oldest segment left by the last completed call stays (so nothing goes), as far
     * as that is known without listing the directory.
     */
    private boolean oldestStays(LogPosition horizon, long cutoff) throws IOException {
        if (horizon.segment().equals(oldest)) {
            return true;
        }
        if (retentionBytes != UNBOUNDED) {
            return false; // the size bound needs the directory's bytes
        }
        List<String> chain = chainBackFrom(horizon.segment(), knownStart);
        return chain.get(0).equals(oldest) && !expired(newestTimestamp(chain.get(0), chain.get(1)), cutoff);
    }

    /**
     * Records stamped Long.MIN_VALUE came before any watermark: they have no age, so only the size
     * bound deletes them (else a stream's first records would always be expired).
     */
    private static boolean expired(long newest, long cutoff) {
        return newest != Long.MIN_VALUE && newest < cutoff;
    }

    private static void checkNotInterrupted(String next) throws InterruptedIOException {
        if (Thread.currentThread().isInterrupted()) {
            throw new InterruptedIOException("Log retention interrupted before writing or deleting " + next);
        }
    }

    /** The stream directory this retention deletes in. */
    public Path directory() {
        return directory;
    }

    /** Names of the chain's segments from its start (or the current {@link LogStart}) to {@code segment}, oldest first. */
    private List<String> chainBackFrom(String segment, @Nullable LogStart start) throws IOException {
        List<String> chain = new ArrayList<>();
        String name = segment;
        while (true) {
            chain.add(name);
            LogPosition link = header(name).predecessorEnd();
            if (link == null || (start != null && start.segment().equals(name))) {
                break;
            }
            SegmentHeader.checkBackLink(
                    new Path(directory, name), header(name).sequence(), new Path(directory, link.segment()),
                    header(link.segment()));
            name = link.segment();
        }
        Collections.reverse(chain);
        return chain;
    }

    private SegmentHeader header(String segment) throws IOException {
        SegmentHeader header = headers.get(segment);
        if (header == null) {
            Path path = new Path(directory, segment);
            try {
                header = SegmentHeader.read(fs, path);
            } catch (FileNotFoundException e) {
                throw new CorruptCecLogException(path, 0, "a segment on the stream is missing", e);
            }
            headers.put(segment, header);
        }
        return header;
    }

    /** The newest timestamp of {@code segment} on the chain, which ends where {@code successor}'s back link says. */
    private long newestTimestamp(String segment, String successor) throws IOException {
        Long newest = newestTimestamps.get(segment);
        if (newest == null) {
            long validLength = header(successor).predecessorEnd().offset();
            newest = SegmentExtent.of(new Path(directory, segment), header(segment), validLength).newestTimestamp(fs);
            newestTimestamps.put(segment, newest);
        }
        return newest;
    }

    private static long sizeWithIndex(String segment, Map<String, Long> bytes) {
        return bytes.getOrDefault(segment, 0L) + bytes.getOrDefault(segment + TimeIndex.SUFFIX, 0L);
    }

    private void delete(String segment, long size, @Nullable LogStart start, LogPosition horizon) throws IOException {
        Path path = new Path(directory, segment);
        checkNotInterrupted(path.toString());
        fs.delete(path, false);
        fs.delete(TimeIndex.indexFileOf(path), false);
        Long newest = newestTimestamps.remove(segment);
        headers.remove(segment);
        LOG.info(
                "Deleted CEC log segment {} ({} bytes with its index, {}) by retention; {} (horizon {})",
                path,
                size,
                newest == null ? "not on the stream" : "newest record t=" + newest,
                start == null ? "the stream starts at its first segment" : "the " + start,
                horizon);
    }

    private static long saturatedMinus(long a, long b) {
        long r = a - b;
        return ((a ^ b) & (a ^ r)) < 0 ? Long.MIN_VALUE : r;
    }
}
