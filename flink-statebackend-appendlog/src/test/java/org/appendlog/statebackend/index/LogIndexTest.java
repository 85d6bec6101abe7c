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

package org.appendlog.statebackend.index;

import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchCompression;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.BatchStream;
import org.appendlog.statebackend.log.RecordFormat;

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionException;
import java.util.concurrent.RejectedExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The index against a plain map: random writes, removals and compaction moves over many entries
 * (growing and shrinking the tables, reusing freed entries, compacting the key arena), then every
 * entry's record, the entry count and each segment's live bytes.
 */
class LogIndexTest {

    private static final String[] SEGMENTS = {"s0", "s1", "s2", "s3", "run"};

    /** The batch at file offset 8 of {@code segment}, the first one. */
    private static BatchLocation batch(String segment) {
        return batch(segment, 8);
    }

    private static BatchLocation batch(String segment, long offset) {
        return new BatchLocation(segment, offset, 100, 1, 1, KeyGroupRange.of(0, 7));
    }

    /**
     * A compaction pass over {@code from} in key groups {@code keyGroups}, as the compactor runs it
     * against the index: every listed record is copied into {@code run} at the position it had.
     */
    private static RecordsToCopy compact(
            LogIndex index, KeyGroupRange keyGroups, List<BatchLocation> from, BatchLocation run) {
        CompactedBatches pass = index.compactedBatches(from);
        RecordsToCopy live = new RecordsToCopy();
        index.collectLive(keyGroups, pass, live);
        for (int i = 0; i < live.size(); i++) {
            live.setCopyPosition(i, live.position(i));
        }
        index.moved(List.of(live), pass, run, false);
        return live;
    }

    /** An index that counts {@code segments}' bytes, as the log's batches in them are added. */
    private static LogIndex counting(KeyGroupRange range, String... segments) {
        LogIndex index = new LogIndex(range);
        for (String segment : segments) {
            index.batchAdded(segment, 0);
        }
        return index;
    }

    @Test
    void agreesWithAMapThroughWritesRemovalsAndMoves() throws Exception {
        LogIndex index = counting(KeyGroupRange.of(0, 3), SEGMENTS);
        // Per entry: its latest record, "segment#batch@position".
        Map<String, String> latest = new HashMap<>();
        Map<String, Integer> lengths = new HashMap<>();
        Random random = new Random(11);
        int runs = 0;
        for (int i = 0; i < 300_000; i++) {
            int keyGroup = random.nextInt(4);
            int state = random.nextInt(3);
            // Keys share prefixes and lengths, so hashes collide and probe runs form.
            byte[] key = ("k" + random.nextInt(30_000)).getBytes(StandardCharsets.UTF_8);
            String id = keyGroup + "/" + state + "/" + new String(key, StandardCharsets.UTF_8);
            int roll = random.nextInt(1000);
            if (roll < 300) {
                index.recordWritten(keyGroup, state, key, 0, key.length, batch("s0"), i, 0, true);
                latest.remove(id);
                lengths.remove(id);
            } else if (roll < 302) {
                // A pass over s1 and s2 in this key group: each of its entries there moves into
                // a new batch of the run segment, at the position it had (positions are unique).
                int run = runs++;
                RecordsToCopy live =
                        compact(
                                index,
                                KeyGroupRange.of(keyGroup, keyGroup),
                                List.of(batch("s1"), batch("s2")),
                                batch("run", 8 + run));
                int listed = 0;
                for (Map.Entry<String, String> e : latest.entrySet()) {
                    if (e.getKey().startsWith(keyGroup + "/")
                            && (e.getValue().startsWith("s1#") || e.getValue().startsWith("s2#"))) {
                        e.setValue("run#" + run + e.getValue().substring(4));
                        listed++;
                    }
                }
                assertThat(live.size()).isEqualTo(listed);
            } else {
                String segment = SEGMENTS[random.nextInt(4)];
                int length = 10 + random.nextInt(50);
                index.recordWritten(
                        keyGroup, state, key, 0, key.length, batch(segment), i, length, false);
                latest.put(id, segment + "#0@" + i);
                lengths.put(id, length);
            }
        }
        assertThat(runs).isGreaterThan(100);
        assertThat(index.liveEntries()).isEqualTo(latest.size());
        Map<String, Long> liveBytes = new HashMap<>();
        for (Map.Entry<String, String> e : latest.entrySet()) {
            String[] parts = e.getKey().split("/", 3);
            byte[] key = parts[2].getBytes(StandardCharsets.UTF_8);
            int keyGroup = Integer.parseInt(parts[0]);
            int state = Integer.parseInt(parts[1]);
            assertThat(index.latestRecord(keyGroup, state, key, 0, key.length))
                    .as(e.getKey())
                    .isEqualTo(e.getValue());
            String segment = e.getValue().substring(0, e.getValue().indexOf('#'));
            liveBytes.merge(segment, (long) lengths.get(e.getKey()), Long::sum);
        }
        for (int k = 0; k < 30_000; k += 7) {
            byte[] key = ("k" + k).getBytes(StandardCharsets.UTF_8);
            if (!latest.containsKey("0/0/k" + k)) {
                    assertThat(index.latestRecord(0, 0, key, 0, key.length)).isNull();
            }
        }
        for (String segment : SEGMENTS) {
            assertThat(index.stats(segment).liveBytes())
                    .as(segment)
                    .isEqualTo(liveBytes.getOrDefault(segment, 0L));
        }
    }

    /**
     * Batches index key group by key group (reading each key group's table into the cache first
     * when the batch has many records for it): the outcome equals indexing record by record.
     */
    @Test
    void aBatchIndexesLikeItsRecordsOneByOne() throws Exception {
        KeyGroupRange range = KeyGroupRange.of(4, 7);
        String[] segments = {"s0", "s1", "s2", "s3", "s4", "s5"};
        LogIndex batched = counting(range, segments);
        LogIndex single = counting(range, segments);
        Random random = new Random(5);
        for (int round = 0; round < 6; round++) {
            String segment = "s" + round;
            BatchBuilder batch = new BatchBuilder(round, range, List.of("a", "b"));
            BatchBuilder tail = new BatchBuilder(round, range, List.of("a", "b"));
            int[] perKeyGroup = new int[4];
            // Within a key group, the tail's records come after the batch's: so in the expected
            // index, whose writes are in that order too.
            List<Runnable> tailWrites = new ArrayList<>();
            for (int i = 0; i < 20_000; i++) {
                int keyGroup = 4 + random.nextInt(4);
                int state = random.nextInt(2);
                byte[] key = ("k" + random.nextInt(40_000)).getBytes(StandardCharsets.UTF_8);
                boolean tombstone = random.nextInt(20) == 0;
                boolean inTail = i % 3 == 0;
                byte[] value = tombstone ? null : key;
                BatchBuilder into = inTail ? tail : batch;
                int position = into.nextPosition(keyGroup);
                int length =
                        RecordFormat.write(
                                into, keyGroup, round, state, key, 0, key.length, value, 0, key.length);
                perKeyGroup[keyGroup - 4]++;
                // The tail's records follow the batch's, all of which are added when they run.
                Runnable write =
                        () ->
                                single.recordWritten(
                                        keyGroup,
                                        state,
                                        key,
                                        0,
                                        key.length,
                                        batch(segment),
                                        inTail
                                                ? batch.nextPosition(keyGroup) + position
                                                : position,
                                        length,
                                        tombstone);
                if (inTail) {
                    tailWrites.add(write);
                } else {
                    write.run();
                }
            }
            tailWrites.forEach(Runnable::run);
            batch.appendAll(tail);
            for (int keyGroup = 4; keyGroup <= 7; keyGroup++) {
                assertThat(batch.recordCount(keyGroup)).isEqualTo(perKeyGroup[keyGroup - 4]);
            }
            batched.batchWritten(batch, batch(segment));
        }
        assertThat(batched.liveEntries()).isEqualTo(single.liveEntries()).isGreaterThan(20_000);
        for (int round = 0; round < 6; round++) {
            assertThat(batched.stats("s" + round).liveBytes())
                    .isEqualTo(single.stats("s" + round).liveBytes());
        }
        for (int k = 0; k < 40_000; k++) {
            byte[] key = ("k" + k).getBytes(StandardCharsets.UTF_8);
            for (int keyGroup = 4; keyGroup <= 7; keyGroup++) {
                assertThat(batched.latestRecord(keyGroup, 1, key, 0, key.length))
                        .isEqualTo(single.latestRecord(keyGroup, 1, key, 0, key.length));
            }
        }
    }

    /**
     * Restore reads each key group's records newest first and indexes only an entry's first one,
     * with tombstones marking entries deleted until the key group is done: the outcome equals
     * indexing every record oldest first.
     */
    @Test
    void rebuildingNewestFirstIndexesLikeWritingOldestFirst() throws Exception {
        KeyGroupRange range = KeyGroupRange.of(0, 3);
        LogIndex written = counting(range, SEGMENTS);
        LogIndex rebuilt = counting(range, SEGMENTS);
        // Each segment's three batches numbered alike in both, whatever order each reads them.
        for (LogIndex index : List.of(written, rebuilt)) {
            for (String segment : SEGMENTS) {
                for (int offset = 8; offset < 11; offset++) {
                    index.segmentStats(index.segmentId(segment)).batchNumber(offset);
                }
            }
        }
        Random random = new Random(23);
        // Per key group, the records in the order they were written: state, key, segment, length.
        List<List<Object[]>> records = new ArrayList<>();
        for (int kg = 0; kg < 4; kg++) {
            records.add(new ArrayList<>());
        }
        for (int i = 0; i < 100_000; i++) {
            int keyGroup = random.nextInt(4);
            int state = random.nextInt(2);
            byte[] key = ("k" + random.nextInt(8_000)).getBytes(StandardCharsets.UTF_8);
            String segment = SEGMENTS[i * SEGMENTS.length / 100_000];
            boolean tombstone = random.nextInt(8) == 0;
            int length = 10 + random.nextInt(40);
            BatchLocation batch = batch(segment, 8 + i / 3 % 3);
            records.get(keyGroup).add(new Object[] {state, key, batch, i, length, tombstone});
            written.recordWritten(keyGroup, state, key, 0, key.length, batch, i, length, tombstone);
        }
        try (IndexRebuild rebuild = rebuilt.rebuild()) {
            for (int kg = 0; kg < 4; kg++) {
                List<Object[]> group = records.get(kg);
                for (int i = group.size() - 1; i >= 0; i--) {
                    Object[] r = group.get(i);
                    byte[] key = (byte[]) r[1];
                    BatchLocation batch = (BatchLocation) r[2];
                    rebuild.indexIfFirst(
                            kg,
                            (int) r[0],
                            key,
                            0,
                            key.length,
                            rebuild.segmentId(batch),
                            rebuild.batchNumber(batch),
                            (int) r[3],
                            (int) r[4],
                            (boolean) r[5]);
                }
                rebuild.keyGroupDone(kg);
            }
        }
        assertThat(rebuilt.liveEntries()).isEqualTo(written.liveEntries()).isGreaterThan(10_000);
        for (String segment : SEGMENTS) {
            assertThat(rebuilt.stats(segment).liveBytes())
                    .as(segment)
                    .isEqualTo(written.stats(segment).liveBytes())
                    .isPositive();
        }
        for (int k = 0; k < 8_000; k++) {
            byte[] key = ("k" + k).getBytes(StandardCharsets.UTF_8);
            for (int kg = 0; kg < 4; kg++) {
                for (int state = 0; state < 2; state++) {
                    assertThat(rebuilt.latestRecord(kg, state, key, 0, key.length))
                            .isEqualTo(written.latestRecord(kg, state, key, 0, key.length));
                }
            }
        }
    }

    /**
     * The index's heap per live entry, 200,000 entries of 8-byte keys in one key group, records of
     * 30 bytes one after the other: a tagged int per slot of a table more than half full (about 7
     * bytes), an int for where the key is, six bytes of place (a byte each for segment, batch and
     * length, three for the position), and the key bytes with their length, in arrays that grow by
     * a quarter.
     */
    @Test
    void anEntryOfAnEightByteKeyCostsTheIndexUnder34Bytes() {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 0));
        int entries = 200_000;
        for (int k = 0; k < entries; k++) {
            byte[] key = String.format("%08d", k).getBytes(StandardCharsets.UTF_8);
            index.recordWritten(0, 0, key, 0, key.length, batch("s0"), k * 30, 30, false);
        }
        assertThat(index.liveEntries()).isEqualTo(entries);
        assertThat(index.heapBytes() / (double) entries).isLessThan(34);
    }

    /**
     * More entries in one key group than a slot first has bits for their numbers: the slots give
     * tag bits to the numbers, and every key stays found, added or removed.
     */
    @Test
    void moreEntriesThanTheSlotsFirstNumberStayFound() {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 0));
        int entries = (1 << 20) + 1_000;
        for (int k = 0; k < entries; k++) {
            byte[] key = Integer.toString(k).getBytes(StandardCharsets.UTF_8);
            index.recordWritten(0, 0, key, 0, key.length, batch("s" + (k % 4)), k, 30, false);
        }
        for (int k = 0; k < entries; k += 2) {
            byte[] key = Integer.toString(k).getBytes(StandardCharsets.UTF_8);
            index.recordWritten(0, 0, key, 0, key.length, batch("s0"), 0, 0, true);
        }
        assertThat(index.liveEntries()).isEqualTo(entries / 2);
        for (int k = 0; k < entries; k++) {
            byte[] key = Integer.toString(k).getBytes(StandardCharsets.UTF_8);
            assertThat(index.latestRecord(0, 0, key, 0, key.length))
                    .as("key %d", k)
                    .isEqualTo(k % 2 == 0 ? null : "s" + (k % 4) + "#0@" + k);
        }
    }

    /**
     * Window state: every round writes the keys of a new window, of varying lengths and in
     * shuffled order, and removes most of the previous window's, so that the key arena is
     * compacted again and again while freed entry numbers are reused out of arena order.
     */
    @Test
    void windowsComingAndGoingKeepEveryLiveKey() throws Exception {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 0));
        Map<String, String> latest = new HashMap<>();
        Random random = new Random(3);
        for (int window = 0; window < 40; window++) {
            String segment = SEGMENTS[window % 4];
            List<String> keys = new ArrayList<>();
            for (int k = 0; k < 3_000 + random.nextInt(3_000); k++) {
                keys.add("w" + window + "-" + "x".repeat(random.nextInt(12)) + k);
            }
            Collections.shuffle(keys, random);
            for (String key : keys) {
                byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
                index.recordWritten(0, 0, bytes, 0, bytes.length, batch(segment), 0, 30, false);
                latest.put(key, segment);
            }
            for (String key : new ArrayList<>(latest.keySet())) {
                if (key.startsWith("w" + (window - 1) + "-") && random.nextInt(10) > 0) {
                    byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
                    index.recordWritten(
                            0, 0, bytes, 0, bytes.length, batch(segment), 0, 0, true);
                    latest.remove(key);
                }
            }
            for (Map.Entry<String, String> e : latest.entrySet()) {
                byte[] bytes = e.getKey().getBytes(StandardCharsets.UTF_8);
                assertThat(index.latestSegment(0, 0, bytes, 0, bytes.length))
                        .as("window %d, key %s", window, e.getKey())
                        .isEqualTo(e.getValue());
            }
            assertThat(index.liveEntries()).isEqualTo(latest.size());
        }
    }

    /**
     * A pass lists the live entries whose latest records are in its batches (not those in another
     * batch of the same segment, nor in key groups it does not cover), and they move into its run.
     * A run's entries move back to where they were if the run is dropped, unless a newer record
     * was indexed since; once a completed checkpoint holds the run, they stay.
     */
    @Test
    void aDroppedRunsEntriesGoBackWhereTheyWere() {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 3));
        byte[] key = "word".getBytes(StandardCharsets.UTF_8);
        byte[] rewritten = "other".getBytes(StandardCharsets.UTF_8);
        byte[] later = "later".getBytes(StandardCharsets.UTF_8);
        index.batchAdded("s1", 100);
        index.recordWritten(1, 0, key, 0, key.length, batch("s1"), 0, 10, false);
        index.recordWritten(1, 0, rewritten, 0, rewritten.length, batch("s1"), 10, 11, false);
        index.recordWritten(1, 0, later, 0, later.length, batch("s1", 200), 0, 12, false);
        index.recordWritten(2, 0, key, 0, key.length, batch("s2"), 0, 13, false);

        RecordsToCopy live =
                compact(
                        index,
                        KeyGroupRange.of(1, 1),
                        List.of(batch("s1"), batch("s2")),
                        batch("run-0"));
        assertThat(live.size()).isEqualTo(2);
        assertThat(index.latestRecord(1, 0, key, 0, key.length)).isEqualTo("run-0#0@0");
        assertThat(index.latestRecord(1, 0, rewritten, 0, rewritten.length))
                .isEqualTo("run-0#0@10");
        assertThat(index.latestRecord(1, 0, later, 0, later.length)).isEqualTo("s1#1@0");
        assertThat(index.latestRecord(2, 0, key, 0, key.length)).isEqualTo("s2#0@0");
        assertThat(index.stats("s1").liveBytes()).isEqualTo(12);
        index.recordWritten(1, 0, rewritten, 0, rewritten.length, batch("s3"), 5, 12, false);

        index.runDropped("run-0", Runnable::run);
        assertThat(index.latestRecord(1, 0, key, 0, key.length)).isEqualTo("s1#0@0");
        assertThat(index.latestRecord(1, 0, rewritten, 0, rewritten.length)).isEqualTo("s3#0@5");
        assertThat(index.stats("s1").liveBytes()).isEqualTo(22);

        compact(index, KeyGroupRange.of(1, 1), List.of(batch("s1")), batch("run-1"));
        index.runTaken("run-1");
        index.runDropped("run-1", Runnable::run);
        assertThat(index.latestRecord(1, 0, key, 0, key.length)).isEqualTo("run-1#0@0");
    }

    /**
     * Batches are indexed while a pass runs: an entry the pass listed may be removed, and its
     * number taken by another entry, even one whose record is in the pass's batch. A move names
     * the record the pass copied, so that number, now the other entry's, is neither moved into the
     * run nor, when the run is dropped, out of it.
     */
    @Test
    void aNumberTakenByAnotherEntryDuringAPassIsNotMoved() {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 3));
        byte[] first = "first".getBytes(StandardCharsets.UTF_8);
        byte[] second = "second".getBytes(StandardCharsets.UTF_8);
        byte[] third = "third".getBytes(StandardCharsets.UTF_8);
        index.recordWritten(1, 0, first, 0, first.length, batch("s1"), 0, 10, false);
        index.recordWritten(1, 0, third, 0, third.length, batch("s1"), 10, 10, false);
        CompactedBatches pass = index.compactedBatches(List.of(batch("s1")));
        RecordsToCopy live = new RecordsToCopy();
        index.collectLive(KeyGroupRange.of(1, 1), pass, live);
        assertThat(live.size()).isEqualTo(2);
        for (int i = 0; i < live.size(); i++) {
            live.setCopyPosition(i, live.position(i));
        }

        index.recordWritten(1, 0, first, 0, first.length, batch("s3"), 0, 0, true);
        index.recordWritten(1, 0, second, 0, second.length, batch("s1"), 50, 20, false);
        index.moved(List.of(live), pass, batch("run-0"), false);
        assertThat(index.latestRecord(1, 0, first, 0, first.length)).isNull();
        assertThat(index.latestRecord(1, 0, second, 0, second.length)).isEqualTo("s1#0@50");
        assertThat(index.latestRecord(1, 0, third, 0, third.length)).isEqualTo("run-0#0@10");

        index.runDropped("run-0", Runnable::run);
        assertThat(index.latestRecord(1, 0, second, 0, second.length)).isEqualTo("s1#0@50");
        assertThat(index.latestRecord(1, 0, third, 0, third.length)).isEqualTo("s1#0@10");
    }

    /**
     * A pass looks for tombstones only in batches of segments in which the index saw one as its
     * entry's latest record: written in a batch, read first on restore, or copied into a run.
     */
    @Test
    void onlySegmentsWithAnIndexedTombstoneMayHoldTombstones() throws Exception {
        KeyGroupRange range = KeyGroupRange.of(0, 3);
        LogIndex index = new LogIndex(range);
        byte[] key = "word".getBytes(StandardCharsets.UTF_8);
        BatchBuilder values = new BatchBuilder(1, range, List.of("count"));
        RecordFormat.write(values, 1, 1, 0, key, 0, key.length, new byte[8], 0, 8);
        index.batchWritten(values, batch("s1"));
        BatchBuilder deletes = new BatchBuilder(2, range, List.of("count"));
        RecordFormat.write(deletes, 1, 2, 0, key, 0, key.length, null, 0, 0);
        index.batchWritten(deletes, batch("s2"));
        try (IndexRebuild rebuild = index.rebuild()) {
            BatchLocation restored = batch("s3");
            rebuild.indexIfFirst(
                    2,
                    0,
                    key,
                    0,
                    key.length,
                    rebuild.segmentId(restored),
                    rebuild.batchNumber(restored),
                    0,
                    7,
                    true);
            rebuild.keyGroupDone(2);
        }
        index.moved(List.of(), index.compactedBatches(List.of()), batch("run-0"), true);
        index.moved(List.of(), index.compactedBatches(List.of()), batch("run-1"), false);

        CompactedBatches pass =
                index.compactedBatches(
                        List.of(
                                batch("s1"),
                                batch("s2"),
                                batch("s3"),
                                batch("run-0"),
                                batch("run-1")));
        assertThat(pass.size()).isEqualTo(5);
        assertThat(pass.mayHoldTombstones(0)).isFalse();
        assertThat(pass.mayHoldTombstones(1)).isTrue();
        assertThat(pass.mayHoldTombstones(2)).isTrue();
        assertThat(pass.mayHoldTombstones(3)).isTrue();
        assertThat(pass.mayHoldTombstones(4)).isFalse();
    }

    /**
     * A segment is counted from the first batch added to it until {@link LogIndex#retain} leaves
     * it out; records indexed in it later, or entries moved into it by compaction, do not bring
     * it back (a run is counted once it is offered, a checkpoint's batch once it is remembered).
     */
    @Test
    void onlyAddingABatchMakesASegmentCounted() {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 3));
        byte[] key = "word".getBytes(StandardCharsets.UTF_8);
        byte[] other = "other".getBytes(StandardCharsets.UTF_8);
        index.batchAdded("s1", 50);
        index.recordWritten(1, 0, key, 0, key.length, batch("s1"), 0, 10, false);
        index.retain(Set.of());
        index.recordWritten(1, 0, other, 0, other.length, batch("s1"), 10, 10, false);
        compact(index, KeyGroupRange.of(0, 3), List.of(batch("s1")), batch("run-0"));
        assertThat(index.segments()).isEmpty();
        assertThat(index.liveBytes()).isZero();

        index.batchAdded("run-0", 40);
        assertThat(index.segments()).extracting(SegmentStats::segment).containsExactly("run-0");
        assertThat(index.liveBytes()).isEqualTo(20);
        assertThat(index.totalBytes()).isEqualTo(40);
    }

    /** Compaction must not judge liveness before the index knows every written batch. */
    @Test
    void awaitUpdatesWaitsForBatchesIndexedInTheBackground() throws Exception {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 3));
        BatchBuilder batch = new BatchBuilder(7, KeyGroupRange.of(0, 3), List.of("count"));
        byte[] key = "word".getBytes(StandardCharsets.UTF_8);
        byte[] value = {42};
        RecordFormat.write(batch, 2, 7, 0, key, 0, key.length, value, 0, value.length);
        List<Runnable> queued = new ArrayList<>();
        index.indexBatchLater(
                batch,
                new BatchLocation("s0", 8, 100, 7, 7, KeyGroupRange.of(0, 3)),
                queued::add);
        assertThat(index.latestSegment(2, 0, key, 0, key.length)).isNull();

        CompletableFuture<Void> awaited =
                CompletableFuture.runAsync(
                        () -> {
                            try {
                                index.awaitUpdates();
                            } catch (Exception e) {
                                throw new CompletionException(e);
                            }
                        });
        Thread.sleep(200);
        assertThat(awaited).isNotDone();
        queued.forEach(Runnable::run);
        awaited.get(10, TimeUnit.SECONDS);
        assertThat(index.latestSegment(2, 0, key, 0, key.length)).isEqualTo("s0");
        assertThat(index.stats("s0").totalBytes()).isEqualTo(100);
    }

    /** A batch that never reaches the background thread does not leave compaction waiting. */
    @Test
    void aRejectedUpdateIsNotAwaited() throws Exception {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 3));
        BatchBuilder batch = new BatchBuilder(7, KeyGroupRange.of(0, 3), List.of("count"));
        assertThatThrownBy(
                        () ->
                                index.indexBatchLater(
                                        batch,
                                        new BatchLocation("s0", 8, 100, 7, 7, KeyGroupRange.of(0, 3)),
                                        task -> {
                                            throw new RejectedExecutionException("shut down");
                                        }))
                .isInstanceOf(RejectedExecutionException.class);
        CompletableFuture.runAsync(
                        () -> {
                            try {
                                index.awaitUpdates();
                            } catch (Exception e) {
                                throw new CompletionException(e);
                            }
                        })
                .get(10, TimeUnit.SECONDS);
    }

    /**
     * A full batch is read back from the log when its checkpoint completes. If its segment is gone
     * by then (a later checkpoint completed first and Flink deleted it), the next checkpoint is
     * asked to be full, and compaction waits; the next full batch indexed makes the index whole.
     */
    @Test
    void aFullBatchThatCannotBeReadBackAsksForAnotherWhichMakesTheIndexWhole(
            @TempDir java.nio.file.Path dir) throws Exception {
        KeyGroupRange range = KeyGroupRange.of(0, 3);
        byte[] key = "word".getBytes(StandardCharsets.UTF_8);
        java.nio.file.Path gone = dir.resolve("s0");
        BatchLocation first = writeFullBatch(gone, 7, key);
        FileStateHandle goneHandle = new FileStateHandle(new Path(gone.toUri()), Files.size(gone));
        Files.delete(gone);
        java.nio.file.Path next = dir.resolve("s1");
        BatchLocation second = writeFullBatch(next, 8, key);

        LogIndex index = new LogIndex(range);
        AtomicInteger requested = new AtomicInteger();
        List<Runnable> queued = new ArrayList<>();
        index.indexFullBatchLater(goneHandle, first, queued::add, requested::incrementAndGet);
        queued.forEach(Runnable::run);
        queued.clear();
        assertThat(requested).hasValue(1);
        assertThatThrownBy(index::awaitUpdates)
                .hasMessageContaining("missed an update")
                .hasRootCauseInstanceOf(FileNotFoundException.class);

        index.indexFullBatchLater(
                new FileStateHandle(new Path(next.toUri()), Files.size(next)),
                second,
                queued::add,
                requested::incrementAndGet);
        queued.forEach(Runnable::run);
        index.awaitUpdates();
        assertThat(requested).hasValue(1);
        assertThat(index.latestSegment(2, 0, key, 0, key.length)).isEqualTo("s1");
        assertThat(index.liveEntries()).isEqualTo(1);
    }

    /** A segment holding one streamed full batch of checkpoint {@code id}: {@code key} in key group 2. */
    private static BatchLocation writeFullBatch(java.nio.file.Path file, long id, byte[] key)
            throws IOException {
        try (OutputStream out = Files.newOutputStream(file)) {
            out.write(BatchFormat.segmentHeader());
            BatchStream batch =
                    new BatchStream(
                            out,
                            file.getFileName().toString(),
                            BatchFormat.SEGMENT_HEADER_BYTES,
                            id,
                            KeyGroupRange.of(0, 3),
                            List.of("count"),
                            BatchCompression.LZ4,
                            BatchStream.BLOCK_BYTES);
            byte[] value = {42};
            RecordFormat.write(batch, 2, id, 0, key, 0, key.length, value, 0, value.length);
            return batch.finish();
        }
    }
}
