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

package org.appendlog.statebackend.faults;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.faults.FaultHarness.Completed;

import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * A log of ten checkpoints, one batch each, in one segment, damaged after the fact: truncated at
 * every batch boundary and inside every batch, bytes flipped in the segment header and in every
 * batch's header, records and footer, the segment deleted or replaced by a copy of another. Each
 * checkpoint then either restores exactly, or the restore fails naming the file and the offset (or
 * the missing path); which one is predicted from where the damage is, and checked.
 */
class DamagedLogTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("damaged-log");
    private static final int CHECKPOINTS = 10;
    private static final int FOOTER_BYTES = 128 * 16 + 12;
    /** magic, version, checkpoint id, oldest record's id, key groups, record count, states, "values". */
    private static final int HEADER_BYTES = 4 + 1 + 8 + 8 + 4 + 4 + 8 + 4 + 2 + 6;

    @TempDir static Path dir;
    private static AppendLogStateBackend stateBackend;
    private static String checkpointDir;
    private static final List<Completed> checkpoints = new ArrayList<>();
    /** ends[i]: where batch i ends (ends[0]: the segment header). */
    private static final long[] ends = new long[CHECKPOINTS + 1];
    private static Path segment;
    private static byte[] pristine;

    @BeforeAll
    static void writeLog() throws Exception {
        stateBackend = backend(dir.resolve("log"), "64mb");
        checkpointDir = dir.resolve("checkpoints").toUri().toString();
        try (FaultHarness writer = FaultHarness.open(stateBackend, checkpointDir)) {
            for (int c = 1; c <= CHECKPOINTS; c++) {
                // Each checkpoint changes other keys, so every batch holds live records.
                for (int key = 0; key < 150; key++) {
                    if (key % CHECKPOINTS == c - 1 || c == 1) {
                        writer.put(key, c * 1000L + key);
                    }
                }
                if (c > 1) {
                    writer.remove(c * 7);
                }
                checkpoints.add(writer.checkpoint(c));
                segment = onlySegment(dir.resolve("log"));
                ends[c] = Files.size(segment);
            }
            // The writer must not delete anything when it goes: pretend the job is still running.
            pristine = Files.readAllBytes(segment);
        }
        ends[0] = 8;
    }

    @AfterAll
    static void clear() {
        checkpoints.clear();
    }

    static AppendLogStateBackend backend(Path logDir, String segmentSize) {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, logDir.toUri().toString());
        config.setString(AppendLogOptions.SEGMENT_SIZE.key(), segmentSize);
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        return new AppendLogStateBackend().configure(config, DamagedLogTest.class.getClassLoader());
    }

    static Path onlySegment(Path logDir) throws IOException {
        List<Path> segments = segments(logDir);
        assertThat(segments).hasSize(1);
        return segments.get(0);
    }

    static List<Path> segments(Path logDir) throws IOException {
        try (Stream<Path> files = Files.walk(logDir)) {
            return files.filter(p -> p.toString().endsWith(".seg")).sorted().collect(Collectors.toList());
        }
    }

    private static void repair() throws IOException {
        Files.write(segment, pristine);
    }

    /**
     * Restores checkpoint {@code c} (1-based): exactly if {@code intact}, else asserts the failure
     * names the segment and an offset. Returns the failure message, or null.
     */
    private static String restore(int c, boolean intact, String damage) throws Exception {
        Completed checkpoint = checkpoints.get(c - 1);
        try (FaultHarness restored = FaultHarness.restore(stateBackend, checkpointDir, checkpoint)) {
            if (!intact) {
                fail("checkpoint %d restored although %s", c, damage);
            }
            FaultHarness.assertExactly(restored.contents(), checkpoint);
            return null;
        } catch (Exception e) {
            String messages = FaultHarness.messages(e);
            if (intact) {
                throw new AssertionError("checkpoint " + c + " should restore despite " + damage + ": " + messages, e);
            }
            assertThat(messages)
                    .as("error of checkpoint %d after %s", c, damage)
                    .contains(segment.getFileName().toString())
                    .containsPattern("at offset \\d+");
            return messages.substring(messages.indexOf("Corrupt state log"));
        }
    }

    @Test
    void truncatedAtEveryBatchBoundaryAndInsideEveryBatch() throws Exception {
        List<long[]> cuts = new ArrayList<>(); // {length, 0 = boundary / 1 = inside batch i}
        cuts.add(new long[] {0, -1});
        cuts.add(new long[] {4, -1});
        for (int b = 0; b < CHECKPOINTS; b++) {
            cuts.add(new long[] {ends[b], -1});
            long start = ends[b];
            long length = ends[b + 1] - start;
            for (long inside : new long[] {start + 1, start + HEADER_BYTES / 2, start + length / 2, ends[b + 1] - FOOTER_BYTES / 2, ends[b + 1] - 1}) {
                cuts.add(new long[] {inside, b + 1});
            }
        }
        int restores = 0;
        try {
            for (long[] cut : cuts) {
                long length = cut[0];
                try (RandomAccessFile file = new RandomAccessFile(segment.toFile(), "rw")) {
                    file.setLength(length);
                }
                String damage = "truncation to " + length + " bytes";
                // Boundary cuts: every checkpoint; inside a batch: the one that adds it and the one before.
                int from = cut[1] < 0 ? 1 : (int) Math.max(1, cut[1] - 1);
                int to = cut[1] < 0 ? CHECKPOINTS : (int) cut[1];
                int exact = 0;
                String error = null;
                for (int c = from; c <= to; c++) {
                    String failure = restore(c, ends[c] <= length, damage);
                    restores++;
                    if (failure == null) {
                        exact++;
                    } else if (error == null) {
                        error = failure;
                    }
                }
                RELIABILITY.record(
                        "segment truncated to " + length + " bytes ("
                                + (cut[1] < 0 ? "a batch boundary" : "inside batch " + cut[1]) + ")",
                        exact + " of " + (to - from + 1) + " checkpoints (" + from + ".." + to
                                + ") restore exactly: exactly those whose batches end before the cut"
                                + (error == null ? "" : "; the others fail: " + error));
                repair();
            }
        } finally {
            repair();
        }
        assertThat(restores).isGreaterThan(CHECKPOINTS * CHECKPOINTS);
    }

    @Test
    void flippedBytesInHeadersRecordsAndFooters() throws Exception {
        List<Object[]> flips = new ArrayList<>(); // {offset, what}
        for (long offset = 0; offset < 8; offset++) {
            flips.add(new Object[] {offset, "segment header byte " + offset});
        }
        String[] headerFields = {"magic", "version", "checkpoint id", "oldest record id", "first key group", "last key group", "record count", "state count", "state name"};
        int[] headerOffsets = {0, 4, 5, 13, 21, 25, 29, 37, 42};
        for (int b = 1; b <= CHECKPOINTS; b++) {
            long start = ends[b - 1];
            long end = ends[b];
            for (int f = 0; f < headerFields.length; f++) {
                flips.add(new Object[] {start + headerOffsets[f], "batch " + b + " header: " + headerFields[f]});
            }
            long records = end - FOOTER_BYTES - start - HEADER_BYTES;
            flips.add(new Object[] {start + HEADER_BYTES, "batch " + b + " first record byte"});
            flips.add(new Object[] {start + HEADER_BYTES + records / 2, "batch " + b + " middle record byte"});
            flips.add(new Object[] {start + HEADER_BYTES + records - 1, "batch " + b + " last record byte"});
            flips.add(new Object[] {end - FOOTER_BYTES + 7, "batch " + b + " footer: key group 0 offset"});
            flips.add(new Object[] {end - FOOTER_BYTES + 64 * 16 + 11, "batch " + b + " footer: key group 64 length"});
            flips.add(new Object[] {end - FOOTER_BYTES + 127 * 16 + 15, "batch " + b + " footer: key group 127 CRC"});
            flips.add(new Object[] {end - 12, "batch " + b + " footer: header length"});
            flips.add(new Object[] {end - 8, "batch " + b + " footer: CRC"});
            flips.add(new Object[] {end - 1, "batch " + b + " footer: magic"});
        }
        try {
            for (Object[] flip : flips) {
                long offset = (Long) flip[0];
                String what = (String) flip[1];
                flip(segment, offset);
                // The segment header is not read on restore: the latest checkpoint restores
                // exactly (the log tool reports the damage). Anything else fails.
                boolean intact = offset < 8;
                String failure = restore(CHECKPOINTS, intact, "flipped " + what);
                RELIABILITY.record(
                        "flipped byte at offset " + offset + " (" + what + ")",
                        failure == null
                                ? "latest checkpoint restores exactly (the segment header is not read on restore)"
                                : "restore of the latest checkpoint fails: " + failure);
                flip(segment, offset);
            }
        } finally {
            repair();
        }
    }

    @Test
    void deletedSegmentIsReportedWithItsPath() throws Exception {
        Files.delete(segment);
        try {
            Completed latest = checkpoints.get(CHECKPOINTS - 1);
            try (FaultHarness restored = FaultHarness.restore(stateBackend, checkpointDir, latest)) {
                fail("restored without its segment");
            } catch (Exception e) {
                String messages = FaultHarness.messages(e);
                assertThat(messages).contains(segment.getFileName().toString()).contains("missing");
                RELIABILITY.record("segment deleted", "restore fails: " + messages.substring(messages.indexOf("State log segment")));
            }
        } finally {
            repair();
        }
    }

    @Test
    void strayCopiesAndAppendedDuplicatesAreIgnored() throws Exception {
        Path copy = segment.resolveSibling(segment.getFileName().toString().replace(".seg", "-copy.seg"));
        Files.copy(segment, copy);
        try (RandomAccessFile file = new RandomAccessFile(segment.toFile(), "rw")) {
            // The last batch once more at the end, as a retried write might leave it.
            file.seek(file.length());
            file.write(pristine, (int) ends[CHECKPOINTS - 1], (int) (ends[CHECKPOINTS] - ends[CHECKPOINTS - 1]));
        }
        try {
            for (int c = 1; c <= CHECKPOINTS; c++) {
                restore(c, true, "a stray copy and an appended duplicate batch");
            }
            RELIABILITY.record("a copy of the segment under another name in the log directory", "every checkpoint restores exactly (only listed segments are read)");
            RELIABILITY.record("the last batch duplicated at the end of the segment", "every checkpoint restores exactly (batches are read at the offsets the checkpoint lists)");
        } finally {
            Files.delete(copy);
            repair();
        }
    }

    @Test
    void aSegmentReplacedByACopyOfAnotherIsDetected(@TempDir Path other) throws Exception {
        // 1 kb segments: each checkpoint's batch is a segment of its own, all of the same size.
        AppendLogStateBackend rolling = backend(other.resolve("log"), "1kb");
        String chk = other.resolve("checkpoints").toUri().toString();
        Completed second;
        try (FaultHarness writer = FaultHarness.open(rolling, chk)) {
            for (int key = 0; key < 100; key++) {
                writer.put(key, 1L);
            }
            writer.checkpoint(1);
            for (int key = 0; key < 100; key++) {
                writer.put(key, 2L);
            }
            second = writer.checkpoint(2);
        }
        List<Path> segments = segments(other.resolve("log"));
        assertThat(segments).hasSize(2);
        assertThat(Files.size(segments.get(0))).isEqualTo(Files.size(segments.get(1)));
        Files.copy(segments.get(0), segments.get(1), StandardCopyOption.REPLACE_EXISTING);
        try (FaultHarness restored = FaultHarness.restore(rolling, chk, second)) {
            fail("restored checkpoint 2 with its segment replaced by checkpoint 1's: %s", restored.contents().get(0));
        } catch (Exception e) {
            String messages = FaultHarness.messages(e);
            assertThat(messages).contains(segments.get(1).getFileName().toString()).containsPattern("at offset \\d+");
            RELIABILITY.record(
                    "a segment overwritten by a copy of another segment of the same size",
                    "restore fails: " + messages.substring(messages.indexOf("Corrupt state log")));
        }
    }

    private static void flip(Path file, long offset) throws IOException {
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "rw")) {
            f.seek(offset);
            int b = f.read();
            f.seek(offset);
            f.write(b ^ 0xFF);
        }
    }
}
