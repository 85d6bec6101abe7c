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

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.RandomAccessFile;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The log on the local file system: rolling, back links, backward and forward reads, corruption. */
class PersistedStreamTest {

    /** Enough that, without retries, listings that race the writer fail in every run. */
    private static final int READS_WHILE_COMMITTING = 20_000;

    @TempDir File tmp;

    private static byte[] payload(int i) {
        return ("record-" + i + "-" + "x".repeat(i % 37)).getBytes(StandardCharsets.UTF_8);
    }

    private LogWriter writer(Path dir, long sequence, LogPosition predecessor) throws IOException {
        return new LogWriter(FileSystem.getLocalFileSystem(), dir, 0, sequence, predecessor, 4096, 256, LogPermissions.of((short) 0700, (short) 0600));
    }

    @Test
    void streamsOfEveryGenerationAreListedAndAWithdrawnOneHasNoCommitButKeepsItsSegments() throws IOException {
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path root = new Path(tmp.toURI());
        Path first = PersistedStream.subtaskDirectory(root, 1);
        Path rescaled = PersistedStream.subtaskDirectory(root, 42L, 2);
        assertThat(first.getName()).isEqualTo("subtask-0001");
        assertThat(rescaled.getName()).isEqualTo("subtask-0002-gen-42");
        for (Path stream : new Path[] {first, rescaled}) {
            try (LogWriter w = new LogWriter(fs, stream, 0, 0, null, 4096, 256, LogPermissions.of((short) 0700, (short) 0600))) {
                w.append(1, payload(1), payload(1).length);
                w.sync();
                PersistedStream.commit(fs, stream, new CommitMarker(7, w.position(), "job"));
                PersistedStream.commit(fs, stream, new CommitMarker(8, w.position(), "job"));
            }
        }

        assertThat(PersistedStream.subtaskDirectories(fs, root)).containsExactly(first, rescaled);
        assertThat(PersistedStream.generationOf(first)).isZero();
        assertThat(PersistedStream.subtaskOf(first)).isEqualTo(1);
        assertThat(PersistedStream.generationOf(rescaled)).isEqualTo(42L);
        assertThat(PersistedStream.subtaskOf(rescaled)).isEqualTo(2);

        long segments = countSegments(rescaled);
        PersistedStream.withdraw(fs, rescaled);
        assertThat(PersistedStream.latestCommit(fs, rescaled)).as("commit of the withdrawn stream").isEmpty();
        assertThat(countSegments(rescaled)).as("segments of the withdrawn stream").isEqualTo(segments).isPositive();
        assertThat(PersistedStream.latestCommit(fs, first).orElseThrow().checkpointId()).isEqualTo(8);
    }

    private static long countSegments(Path directory) {
        File[] segments = new File(directory.toUri()).listFiles((d, name) -> LogWriter.sequenceOf(name) >= 0);
        return segments == null ? 0 : segments.length;
    }

    @Test
    void readsBackwardsAcrossRolledSegmentsAndForwardFromATimestamp() throws IOException {
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path dir = new Path(tmp.toURI());
        LogPosition end;
        try (LogWriter w = writer(dir, 0, null)) {
            for (int i = 0; i < 1000; i++) {
                w.append(i / 3, payload(i), payload(i).length); // timestamps repeat: 0,0,0,1,1,1,...
            }
            w.sync();
            end = w.position();
            assertThat(w.sequence()).as("segments rolled at 4 KiB").isGreaterThan(5);
        }
        List<SegmentExtent> chain = PersistedStream.chainEndingAt(fs, dir, end);
        assertThat(chain).hasSizeGreaterThan(5);

        List<String> backwards = new ArrayList<>();
        try (BackwardLogReader r = new BackwardLogReader(fs, dir, end)) {
            for (LogRecord rec = r.previous(); rec != null; rec = r.previous()) {
                backwards.add(new String(rec.payload(), StandardCharsets.UTF_8));
            }
        }
        assertThat(backwards).hasSize(1000);
        assertThat(backwards.get(0)).isEqualTo(new String(payload(999), StandardCharsets.UTF_8));
        assertThat(backwards.get(999)).isEqualTo(new String(payload(0), StandardCharsets.UTF_8));

        for (long from : new long[] {Long.MIN_VALUE, 0, 1, 100, 101, 250, 333, 334}) {
            List<Long> timestamps = new ArrayList<>();
            try (ForwardLogReader r = new ForwardLogReader(fs, chain, from, null)) {
                for (LogRecord rec = r.next(); rec != null; rec = r.next()) {
                    timestamps.add(rec.timestamp());
                }
            }
            long expected = 0;
            for (int i = 0; i < 1000; i++) {
                if (i / 3 >= from) {
                    expected++;
                }
            }
            assertThat(timestamps).as("records at or after %d", from).hasSize((int) expected);
            assertThat(timestamps).allMatch(t -> t >= from);
        }
    }

    @Test
    void newSegmentCutsOffTheTailWrittenAfterTheCheckpointedPosition() throws IOException {
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path dir = new Path(tmp.toURI());
        LogPosition checkpointed;
        try (LogWriter failedAttempt = writer(dir, 0, null)) {
            for (int i = 0; i < 10; i++) {
                failedAttempt.append(i, payload(i), payload(i).length);
            }
            failedAttempt.sync();
            checkpointed = failedAttempt.position();
            for (int i = 10; i < 20; i++) {
                failedAttempt.append(i, payload(i), payload(i).length); // the tail to be cut off
            }
        }
        LogPosition end;
        try (LogWriter next = writer(dir, 1, checkpointed)) {
            for (int i = 100; i < 105; i++) {
                next.append(i, payload(i), payload(i).length);
            }
            next.sync();
            end = next.position();
        }
        List<Long> timestamps = new ArrayList<>();
        try (ForwardLogReader r = new ForwardLogReader(fs, PersistedStream.chainEndingAt(fs, dir, end), 5, null)) {
            for (LogRecord rec = r.next(); rec != null; rec = r.next()) {
                timestamps.add(rec.timestamp());
            }
        }
        assertThat(timestamps).containsExactly(5L, 6L, 7L, 8L, 9L, 100L, 101L, 102L, 103L, 104L);
    }

    @Test
    void corruptRecordIsReportedWithFileAndOffset() throws IOException {
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path dir = new Path(tmp.toURI());
        LogPosition end;
        try (LogWriter w = writer(dir, 0, null)) {
            for (int i = 0; i < 5; i++) {
                w.append(i, payload(i), payload(i).length);
            }
            w.sync();
            end = w.position();
        }
        File segment = new File(tmp, end.segment());
        try (RandomAccessFile raf = new RandomAccessFile(segment, "rw")) {
            raf.seek(end.offset() - 10);
            raf.write(0x5A ^ raf.read());
        }
        assertThatThrownBy(() -> {
                    try (BackwardLogReader r = new BackwardLogReader(fs, dir, end)) {
                        r.previous();
                    }
                })
                .hasMessageContaining(end.segment())
                .hasMessageContaining("offset");
    }

    @Test
    void commitMarkerNamesTheLatestCommittedEnd() throws IOException {
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path dir = new Path(tmp.toURI());
        assertThat(PersistedStream.committedEnd(fs, dir)).isEmpty();
        for (long cp = 1; cp <= 5; cp++) {
            PersistedStream.commit(fs, dir, new CommitMarker(cp, new LogPosition("seg", cp * 10), "job"));
        }
        assertThat(PersistedStream.committedEnd(fs, dir)).contains(new LogPosition("seg", 50));
        assertThat(PersistedStream.latestCommit(fs, dir).orElseThrow().checkpointId()).isEqualTo(5);
        assertThat(new File(tmp.getPath()).list((d, n) -> n.startsWith("commit-"))).hasSize(3);
    }

    /**
     * A job restored from an older savepoint commits lower checkpoint ids than the run it
     * replaces: its commits are the latest all the same, and the cleanup keeps them.
     */
    @Test
    void aCommitOfALowerCheckpointIdAfterARestoreIsTheLatest() throws IOException {
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path dir = new Path(tmp.toURI());
        for (long cp = 48; cp <= 50; cp++) {
            PersistedStream.commit(fs, dir, new CommitMarker(cp, new LogPosition("old", cp), "job"));
        }
        PersistedStream.commit(fs, dir, new CommitMarker(31, new LogPosition("restored", 1), "job"));
        assertThat(PersistedStream.latestCommit(fs, dir).orElseThrow().checkpointId()).isEqualTo(31);
        assertThat(PersistedStream.committedEnd(fs, dir)).contains(new LogPosition("restored", 1));
        assertThat(new File(tmp.getPath()).list((d, n) -> n.startsWith("commit-"))).hasSize(3);
    }

    /**
     * Flink's local file system looks up every name it lists, so a listing fails if a name it
     * read is renamed or deleted before its lookup: here the writer's temporary markers (renamed
     * into place) and old markers (deleted). A reader must still find a committed marker, never
     * an older one than it saw before, and never fail. The writer commits once per read, so it
     * races every read but cannot starve one, as a job commits once per checkpoint.
     */
    @Test
    void theLatestCommitIsFoundWhileAWriterCommits() throws Exception {
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path dir = new Path(tmp.toURI());
        PersistedStream.commit(fs, dir, new CommitMarker(0, new LogPosition("seg", 0), "job"));
        AtomicBoolean reading = new AtomicBoolean(true);
        AtomicLong reads = new AtomicLong();
        CompletableFuture<Long> writer =
                CompletableFuture.supplyAsync(
                        () -> {
                            long cp = 0;
                            try {
                                while (reading.get()) {
                                    long readsBefore = reads.get();
                                    cp++;
                                    PersistedStream.commit(fs, dir, new CommitMarker(cp, new LogPosition("seg", cp), "job"));
                                    while (reads.get() == readsBefore && reading.get()) {
                                        Thread.yield();
                                    }
                                }
                            } catch (IOException e) {
                                throw new UncheckedIOException(e);
                            }
                            return cp;
                        });
        try {
            long seen = 0;
            for (int i = 0; i < READS_WHILE_COMMITTING; i++) {
                long latest = PersistedStream.latestCommit(fs, dir).orElseThrow().checkpointId();
                assertThat(latest).as("read %d", i).isGreaterThanOrEqualTo(seen);
                seen = latest;
                reads.incrementAndGet();
            }
        } finally {
            reading.set(false);
        }
        assertThat(writer.get()).as("commits written while reading").isPositive();
    }

    @Test
    void rejectsAFileThatIsNotASegment() throws IOException {
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path bogus = new Path(new Path(tmp.toURI()), "bogus.log");
        try (FSDataOutputStream out = fs.create(bogus, FileSystem.WriteMode.OVERWRITE)) {
            out.write("not a segment".getBytes(StandardCharsets.UTF_8));
        }
        assertThatThrownBy(() -> SegmentHeader.read(fs, bogus)).hasMessageContaining("not a CEC log segment");
    }
}
