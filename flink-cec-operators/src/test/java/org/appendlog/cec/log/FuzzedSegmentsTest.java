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
import org.appendlog.testing.MutationRun;
import org.appendlog.testing.MutationRun.Mutation;
import org.appendlog.testing.MutationRun.Violation;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A seeded fuzz test of a subtask's persisted stream: segments (rolled, and one continued by a
 * restored attempt from a checkpointed position, which leaves a tail behind) and their time
 * indexes, mutated thousands of ways: every header field, sampled records' length, timestamp,
 * payload, CRC and trailer, and index entries set to 0, -1, 2^31-1 (and the longest long) or a
 * bit flipped, random bit flips, truncations at the header and at records. On each the stream is
 * read forward from three timestamps (through the time index) and backward from its end (the
 * operator's recovery scan): each read returns exactly the records written, or fails naming the
 * damaged segment and an offset. A damaged index never fails a read: the record an entry names
 * is checked, and the read starts over without the index if it differs.
 */
class FuzzedSegmentsTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("cec-fuzzed-log");
    private static final int RECORDS = 600;
    private static final int CHECKPOINTED = 400;
    private static final int RANDOM_FLIPS = 150;
    private static final long[] READ_FROM = {Long.MIN_VALUE, 95, 180};

    @TempDir File tmp;

    private static byte[] payload(int attempt, int i) {
        return ("attempt-" + attempt + "-record-" + i + "-" + "x".repeat(i % 37)).getBytes(StandardCharsets.UTF_8);
    }

    private static long timestamp(int i) {
        return i / 3;
    }

    @Test
    void everyMutationReadsExactlyOrFailsNamingTheFileAndOffset() throws Exception {
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path dir = new Path(tmp.toURI());
        // The first attempt writes RECORDS records; a restored one continues after CHECKPOINTED.
        LogPosition checkpointed = null;
        long sequence;
        try (LogWriter first = new LogWriter(fs, dir, 0, 0, null, 4096, 256, LogPermissions.of((short) 0700, (short) 0600))) {
            for (int i = 0; i < RECORDS; i++) {
                if (i == CHECKPOINTED) {
                    first.sync();
                    checkpointed = first.position();
                }
                first.append(timestamp(i), payload(1, i), payload(1, i).length);
            }
            sequence = first.sequence();
        }
        List<String> expected = new ArrayList<>();
        for (int i = 0; i < CHECKPOINTED; i++) {
            expected.add(timestamp(i) + " " + new String(payload(1, i), StandardCharsets.UTF_8));
        }
        LogPosition end;
        try (LogWriter second = new LogWriter(fs, dir, 0, sequence + 1, checkpointed, 4096, 256, LogPermissions.of((short) 0700, (short) 0600))) {
            for (int i = CHECKPOINTED; i < RECORDS; i++) {
                second.append(timestamp(i), payload(2, i), payload(2, i).length);
                expected.add(timestamp(i) + " " + new String(payload(2, i), StandardCharsets.UTF_8));
            }
            second.sync();
            end = second.position();
        }

        MutationRun run = new MutationRun("FuzzedSegmentsTest");
        List<java.nio.file.Path> segments = files(".log");
        List<java.nio.file.Path> indexes = files(".idx");
        assertThat(segments).hasSizeGreaterThan(3);
        for (java.nio.file.Path segment : segments) {
            segmentMutations(segment, run);
        }
        for (java.nio.file.Path index : indexes) {
            indexMutations(index, run);
        }
        LogPosition from = end;
        assertThat(readAll(fs, dir, from)).isEqualTo(readings(expected));
        List<String> violations =
                run.run(
                        RELIABILITY,
                        List.of(m -> read(fs, dir, from, expected, m)));
        assertThat(violations)
                .as("cases that neither read exactly nor failed naming the file and offset (seed %d)", run.seed())
                .isEmpty();
    }

    private List<java.nio.file.Path> files(String suffix) throws Exception {
        try (Stream<java.nio.file.Path> files = Files.list(tmp.toPath())) {
            return files.filter(p -> p.toString().endsWith(suffix)).sorted().collect(Collectors.toList());
        }
    }

    /** The header's fields, sampled records' fields, truncations at them, random flips. */
    private static void segmentMutations(java.nio.file.Path segment, MutationRun run) throws Exception {
        byte[] bytes = Files.readAllBytes(segment);
        String part = "segment header";
        int headerLength = LogRecord.getInt(bytes, 4);
        run.field(segment, part, "magic", 0, 4);
        run.field(segment, part, "header length", 4, 4);
        run.field(segment, part, "format version", 8, 4);
        run.field(segment, part, "subtask", 12, 4);
        run.field(segment, part, "sequence number", 16, 8);
        run.field(segment, part, "back link's valid length", 24, 8);
        run.field(segment, part, "back link's name length", 32, 2);
        if (headerLength > 38) {
            run.flip(segment, part + " field: a bit flipped", "back link's name", 34 + run.random().nextInt(headerLength - 38));
        }
        run.field(segment, part, "CRC32C", headerLength - 4, 4);
        run.truncation(segment, "segment", "empty file", 0, false);
        run.truncation(segment, "segment", "inside the header", headerLength / 2, false);
        run.truncation(segment, "segment", "header end", headerLength, true);
        List<Long> records = new ArrayList<>();
        for (long at = headerLength; at + 4 <= bytes.length; at += LogRecord.getInt(bytes, (int) at) + 12L) {
            records.add(at);
        }
        Set<Integer> sampled = new TreeSet<>(List.of(0, records.size() / 2, records.size() - 1, run.random().nextInt(records.size())));
        for (int r : sampled) {
            long at = records.get(r);
            int len = LogRecord.getInt(bytes, (int) at);
            String record = "record " + r;
            run.field(segment, "record", record + " length", at, 4);
            run.field(segment, "record", record + " timestamp", at + 4, 8);
            run.flip(segment, "record field: a bit flipped", record + " payload", at + 12 + run.random().nextInt(len - 8));
            run.field(segment, "record", record + " CRC32C", at + 4 + len, 4);
            run.field(segment, "record", record + " trailing length", at + 8 + len, 4);
            run.truncation(segment, "segment", record + " start", at, true);
            run.truncation(segment, "segment", record + " inside", at + 1 + run.random().nextInt(len + 10), false);
        }
        run.randomFlips(segment, "segment: random bit flip", RANDOM_FLIPS);
    }

    /** Sampled entries' timestamp and offset, truncations inside an entry, random flips. */
    private static void indexMutations(java.nio.file.Path index, MutationRun run) throws Exception {
        long entries = Files.size(index) / TimeIndex.ENTRY_BYTES;
        if (entries == 0) {
            return;
        }
        Set<Long> sampled = new TreeSet<>(List.of(0L, entries / 2, entries - 1));
        for (long e : sampled) {
            long at = e * TimeIndex.ENTRY_BYTES;
            run.field(index, "time index", "entry " + e + " timestamp", at, 8);
            run.field(index, "time index", "entry " + e + " offset", at + 8, 8);
            run.truncation(index, "time index", "inside entry " + e, at + 5, false);
        }
        run.randomFlips(index, "time index: random bit flip", RANDOM_FLIPS / 10);
    }

    /** What each read must return: the records from each start timestamp, and all backwards. */
    private static List<List<String>> readings(List<String> expected) {
        List<List<String>> readings = new ArrayList<>();
        for (long from : READ_FROM) {
            readings.add(expected.stream().filter(r -> Long.parseLong(r.split(" ")[0]) >= from).collect(Collectors.toList()));
        }
        List<String> backwards = new ArrayList<>(expected);
        Collections.reverse(backwards);
        readings.add(backwards);
        return readings;
    }

    private static List<List<String>> readAll(FileSystem fs, Path dir, LogPosition end) throws Exception {
        List<List<String>> readings = new ArrayList<>();
        List<SegmentExtent> chain = PersistedStream.chainEndingAt(fs, dir, end);
        for (long from : READ_FROM) {
            List<String> records = new ArrayList<>();
            try (ForwardLogReader reader = new ForwardLogReader(fs, chain, from, null)) {
                for (LogRecord r = reader.next(); r != null; r = reader.next()) {
                    records.add(r.timestamp() + " " + new String(r.payload(), StandardCharsets.UTF_8));
                }
            }
            readings.add(records);
        }
        List<String> backwards = new ArrayList<>();
        try (BackwardLogReader reader = new BackwardLogReader(fs, dir, end)) {
            for (LogRecord r = reader.previous(); r != null; r = reader.previous()) {
                backwards.add(r.timestamp() + " " + new String(r.payload(), StandardCharsets.UTF_8));
            }
        }
        readings.add(backwards);
        return readings;
    }

    private static String read(FileSystem fs, Path dir, LogPosition end, List<String> expected, Mutation m) throws Violation {
        List<List<String>> readings;
        try {
            readings = readAll(fs, dir, end);
        } catch (Throwable t) {
            if (m.file.toString().endsWith(".idx")) {
                throw new Violation("a damaged time index failed a read: " + t);
            }
            return "read fails naming the file and offset: " + MutationRun.namesFileAndOffset(t, m);
        }
        if (!readings.equals(readings(expected))) {
            throw new Violation("wrong records read: " + readings.stream().map(List::size).collect(Collectors.toList()));
        }
        return "reads exactly";
    }
}
