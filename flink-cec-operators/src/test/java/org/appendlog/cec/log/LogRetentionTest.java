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

import org.appendlog.statebackend.faults.ReliabilityLog;

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * {@link LogRetention} on the local file system: which segments go by time and by size, that the
 * horizon holds them back, that failed attempts' tails go too, that readers and a crash in
 * the middle of the deletions leave a stream that reads from its new start, and that a call lists
 * the directory only when a segment may go.
 */
class LogRetentionTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("cec-log-retention");
    private static final int RECORDS = 1000;

    private final FileSystem fs = FileSystem.getLocalFileSystem();

    @TempDir File root;

    /** The subtask directory under test. */
    private File tmp;

    private Path dir() {
        return new Path(tmp.toURI());
    }

    @BeforeEach
    void createDirectory() {
        tmp = new File(root, "subtask-0000");
        assertThat(tmp.mkdir()).isTrue();
    }

    /** Writes records with timestamps {@code [first, first + n)} from a new segment; returns the end. */
    private LogPosition write(long sequence, LogPosition predecessor, long first, int n) throws IOException {
        try (LogWriter w = new LogWriter(fs, dir(), 0, sequence, predecessor, 4096, 256, LogPermissions.of((short) 0700, (short) 0600))) {
            for (long t = first; t < first + n; t++) {
                byte[] payload = ("record-" + t + "-" + "x".repeat((int) (t % 37))).getBytes(StandardCharsets.UTF_8);
                w.append(t, payload, payload.length);
            }
            w.sync();
            return w.position();
        }
    }

    /** Timestamps of the stream ending at {@code end}, read forward from {@code from}. */
    private List<Long> timestamps(LogPosition end, long from) throws IOException {
        List<Long> out = new ArrayList<>();
        try (ForwardLogReader r = new ForwardLogReader(fs, PersistedStream.chainEndingAt(fs, dir(), end), from, null)) {
            for (LogRecord rec = r.next(); rec != null; rec = r.next()) {
                out.add(rec.timestamp());
            }
        }
        return out;
    }

    /** Newest timestamp of each segment on the stream ending at {@code end}, by segment name, oldest first. */
    private Map<String, Long> newestBySegment(LogPosition end) throws IOException {
        Map<String, Long> newest = new LinkedHashMap<>();
        for (SegmentExtent extent : PersistedStream.chainEndingAt(fs, dir(), end)) {
            newest.put(extent.path().getName(), extent.newestTimestamp(fs));
        }
        return newest;
    }

    private long directoryBytes() throws IOException {
        try (Stream<java.nio.file.Path> files = Files.list(tmp.toPath())) {
            return files.mapToLong(p -> p.toFile().length()).sum();
        }
    }

    private List<String> segmentFiles() {
        return Stream.of(tmp.list()).filter(n -> LogWriter.sequenceOf(n) >= 0).sorted().collect(Collectors.toList());
    }

    @Test
    void retentionTimeDeletesExactlyTheLeadingSegmentsWhoseNewestRecordIsOlder() throws IOException {
        LogPosition end = write(0, null, 0, RECORDS);
        Map<String, Long> newest = newestBySegment(end);
        assertThat(newest).as("segments rolled at 4 KiB").hasSizeGreaterThan(10);
        long cutoff = (RECORDS - 1) - 300;
        List<String> expectedDeleted =
                newest.entrySet().stream().filter(e -> e.getValue() < cutoff).map(Map.Entry::getKey).collect(Collectors.toList());

        int deleted = new LogRetention(fs, dir(), 300, LogRetention.UNBOUNDED).enforce(end, RECORDS - 1);

        assertThat(deleted).isEqualTo(expectedDeleted.size()).isGreaterThan(5);
        assertThat(segmentFiles()).doesNotContainAnyElementsOf(expectedDeleted);
        assertThat(tmp.list()).noneMatch(n -> expectedDeleted.stream().anyMatch(d -> n.equals(d + TimeIndex.SUFFIX)));
        LogStart start = LogStart.read(fs, dir()).orElseThrow();
        long earliest = newest.get(expectedDeleted.get(expectedDeleted.size() - 1)) + 1;
        assertThat(start.earliestTimestamp()).isEqualTo(earliest).isLessThanOrEqualTo(cutoff);
        // What remains reads forward and backward, from exactly the first record kept.
        assertThat(timestamps(end, Long.MIN_VALUE)).first().isEqualTo(earliest);
        assertThat(timestamps(end, Long.MIN_VALUE)).hasSize((int) (RECORDS - earliest));
        assertThat(timestamps(end, 800)).hasSize(RECORDS - 800);
        int backwards = 0;
        try (BackwardLogReader r = new BackwardLogReader(fs, dir(), end)) {
            while (r.previous() != null) {
                backwards++;
            }
        }
        assertThat(backwards).isEqualTo(RECORDS - earliest);

        assertThat(new LogRetention(fs, dir(), 300, LogRetention.UNBOUNDED).enforce(end, RECORDS - 1))
                .as("a second call with the same newest timestamp")
                .isZero();
    }

    @Test
    void retentionSizeDeletesTheOldestSegmentsWhileTheDirectoryExceedsIt() throws IOException {
        LogPosition end = write(0, null, 0, RECORDS);
        PersistedStream.commit(fs, dir(), new CommitMarker(1, end, "job"));
        long before = directoryBytes();
        long bound = before / 3;
        List<String> segmentsBefore = segmentFiles();
        Map<String, Long> bytesWithIndex = new HashMap<>();
        for (String segment : segmentsBefore) {
            bytesWithIndex.put(segment, new File(tmp, segment).length() + new File(tmp, segment + TimeIndex.SUFFIX).length());
        }

        int deleted = new LogRetention(fs, dir(), LogRetention.UNBOUNDED, bound).enforce(end, RECORDS - 1);

        long after = directoryBytes();
        assertThat(after).as("directory bytes after").isLessThanOrEqualTo(bound);
        assertThat(after + bytesWithIndex.get(segmentsBefore.get(deleted - 1)))
                .as("bytes had the last deleted segment stayed (a marker file more is written)")
                .isGreaterThan(bound);
        assertThat(segmentFiles()).isEqualTo(segmentsBefore.subList(deleted, segmentsBefore.size()));
        List<Long> kept = timestamps(end, Long.MIN_VALUE);
        assertThat(kept).last().isEqualTo((long) RECORDS - 1);
        assertThat(kept.get(0)).isEqualTo(LogStart.read(fs, dir()).orElseThrow().earliestTimestamp());
    }

    @Test
    void nothingAtOrAfterTheHorizonIsDeleted() throws IOException {
        LogPosition end = write(0, null, 0, RECORDS);
        List<SegmentExtent> chain = PersistedStream.chainEndingAt(fs, dir(), end);
        SegmentExtent horizonSegment = chain.get(3);
        LogPosition horizon = new LogPosition(horizonSegment.path().getName(), horizonSegment.firstRecordOffset() + 100);

        int deleted = new LogRetention(fs, dir(), 1, 1).enforce(horizon, RECORDS - 1);

        assertThat(deleted).isEqualTo(3);
        assertThat(PersistedStream.chainEndingAt(fs, dir(), end).get(0).path()).isEqualTo(horizonSegment.path());
        assertThat(timestamps(end, Long.MIN_VALUE).get(0)).isEqualTo(TimeIndex.read(fs, horizonSegment.path(), 0, Long.MAX_VALUE).firstTimestamp());
    }

    @Test
    void tailsOfFailedAttemptsGoOnceTheStreamsStartIsNewer() throws IOException {
        LogPosition checkpoint = write(0, null, 0, 300);
        long restoredSequence = LogWriter.sequenceOf(checkpoint.segment());
        // A failed attempt wrote on after the checkpoint; the restore continues from the checkpoint.
        write(restoredSequence + 1, checkpoint, 300, 200);
        List<String> abandoned = new ArrayList<>(segmentFiles());
        LogPosition end = write(restoredSequence + 1, checkpoint, 300, 700);
        abandoned.removeIf(n -> LogWriter.sequenceOf(n) <= restoredSequence);
        assertThat(abandoned).hasSizeGreaterThan(1);

        new LogRetention(fs, dir(), 100, LogRetention.UNBOUNDED).enforce(end, 999);

        assertThat(segmentFiles()).doesNotContainAnyElementsOf(abandoned);
        List<Long> kept = timestamps(end, Long.MIN_VALUE);
        long earliest = LogStart.read(fs, dir()).orElseThrow().earliestTimestamp();
        assertThat(kept).hasSize((int) (1000 - earliest)).first().isEqualTo(earliest);
    }

    @Test
    void aCrashInTheMiddleOfTheDeletionsLeavesAReadableStream() throws IOException {
        LogPosition end = write(0, null, 0, RECORDS);
        File copy = new File(root, "copy");
        assertThat(copy.mkdir()).isTrue();
        for (String name : tmp.list()) {
            Files.copy(new File(tmp, name).toPath(), new File(copy, name).toPath(), StandardCopyOption.COPY_ATTRIBUTES);
        }
        List<String> before = segmentFiles();
        int deleted = new LogRetention(fs, dir(), 300, LogRetention.UNBOUNDED).enforce(end, RECORDS - 1);
        long earliest = LogStart.read(fs, dir()).orElseThrow().earliestTimestamp();
        // As if the process died after the first deletion: the start marker and the later files are there.
        for (String segment : before.subList(1, deleted)) {
            for (String name : new String[] {segment, segment + TimeIndex.SUFFIX}) {
                Files.copy(new File(copy, name).toPath(), new File(tmp, name).toPath());
            }
        }

        List<Long> read = timestamps(end, Long.MIN_VALUE);
        assertThat(read).hasSize((int) (RECORDS - earliest)).first().isEqualTo(earliest);
        int again = new LogRetention(fs, dir(), 300, LogRetention.UNBOUNDED).enforce(end, RECORDS - 1);
        assertThat(again).isEqualTo(deleted - 1);
        assertThat(segmentFiles()).isEqualTo(before.subList(deleted, before.size()));
        assertThat(timestamps(end, Long.MIN_VALUE)).isEqualTo(read);
        RELIABILITY.record(
                "retention killed after the 1st of " + deleted + " segment deletions (start marker written)",
                "readers see the stream from its new start (t=" + earliest + ", " + read.size() + " records); the next"
                        + " retention deletes the " + (deleted - 1) + " segments left behind");
    }

    @Test
    void aCallListsTheDirectoryOnlyWhenASegmentMayGo() throws IOException {
        LogPosition end = write(0, null, 0, RECORDS);
        Map<String, Long> newest = newestBySegment(end);
        List<Long> newestInOrder = new ArrayList<>(newest.values());
        AtomicInteger listings = new AtomicInteger();
        FileSystem counting =
                new LocalFileSystem() {
                    @Override
                    public FileStatus[] listStatus(Path f) throws IOException {
                        listings.incrementAndGet();
                        return super.listStatus(f);
                    }
                };
        LogRetention retention = new LogRetention(counting, dir(), 300, LogRetention.UNBOUNDED);
        long firstKept = newestInOrder.get(0) + 300; // the stream time at which the first segment still stays

        assertThat(retention.enforce(end, firstKept)).as("the first call").isZero();
        int afterFirst = listings.get();
        assertThat(afterFirst).as("listings of the first call").isPositive();
        assertThat(retention.enforce(end, firstKept)).isZero();
        assertThat(listings.get()).as("listings while the oldest segment is within the retention time").isEqualTo(afterFirst);

        long twoExpire = newestInOrder.get(1) + 301;
        assertThat(retention.enforce(end, twoExpire)).as("once two segments aged out").isEqualTo(2);
        int afterDeletion = listings.get();
        assertThat(afterDeletion).isGreaterThan(afterFirst);
        assertThat(retention.enforce(end, twoExpire)).isZero();
        LogPosition horizonInOldest = new LogPosition(segmentFiles().get(0), 100);
        assertThat(retention.enforce(horizonInOldest, Long.MAX_VALUE)).as("with the horizon in the oldest segment").isZero();
        assertThat(listings.get()).as("listings after the deletion").isEqualTo(afterDeletion);
    }
}
