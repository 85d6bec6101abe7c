package org.appendlog.statebackend.index;

import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchLocation;

import org.apache.flink.runtime.state.KeyGroupRange;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
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

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The index against a plain map: random writes, removals and compaction moves over many entries
 * (growing and shrinking the tables, reusing freed entries, compacting the key arena), then every
 * entry's segment, the entry count and each segment's live bytes.
 */
class LogIndexTest {

    private static final String[] SEGMENTS = {"s0", "s1", "s2", "s3", "run"};

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
        Map<String, String> latest = new HashMap<>();
        Map<String, Integer> lengths = new HashMap<>();
        Random random = new Random(11);
        for (int i = 0; i < 300_000; i++) {
            int keyGroup = random.nextInt(4);
            int state = random.nextInt(3);
            // Keys share prefixes and lengths, so hashes collide and probe runs form.
            byte[] key = ("k" + random.nextInt(30_000)).getBytes(StandardCharsets.UTF_8);
            String id = keyGroup + "/" + state + "/" + new String(key, StandardCharsets.UTF_8);
            int roll = random.nextInt(10);
            if (roll < 3) {
                index.recordWritten(keyGroup, state, key, 0, key.length, "s0", 0, true);
                latest.remove(id);
                lengths.remove(id);
            } else if (roll < 4) {
                BatchBuilder run =
                        new BatchBuilder(1, KeyGroupRange.of(0, 3), List.of("a", "b", "c"));
                int length = run.add(keyGroup, 1, state, key, 0, key.length, new byte[20], 0, 20);
                index.moved(run, index.segmentSet(Set.of("s1", "s2")), "run");
                if (latest.containsKey(id) && Set.of("s1", "s2").contains(latest.get(id))) {
                    latest.put(id, "run");
                    lengths.put(id, length);
                }
            } else {
                String segment = SEGMENTS[random.nextInt(4)];
                int length = 10 + random.nextInt(50);
                index.recordWritten(keyGroup, state, key, 0, key.length, segment, length, false);
                latest.put(id, segment);
                lengths.put(id, length);
            }
        }
        assertThat(index.liveEntries()).isEqualTo(latest.size());
        Map<String, Long> liveBytes = new HashMap<>();
        for (Map.Entry<String, String> e : latest.entrySet()) {
            String[] parts = e.getKey().split("/", 3);
            byte[] key = parts[2].getBytes(StandardCharsets.UTF_8);
            assertThat(index.latestSegment(Integer.parseInt(parts[0]), Integer.parseInt(parts[1]), key, 0, key.length))
                    .as(e.getKey())
                    .isEqualTo(e.getValue());
            liveBytes.merge(e.getValue(), (long) lengths.get(e.getKey()), Long::sum);
        }
        for (int k = 0; k < 30_000; k += 7) {
            byte[] key = ("k" + k).getBytes(StandardCharsets.UTF_8);
            if (!latest.containsKey("0/0/k" + k)) {
                assertThat(index.latestSegment(0, 0, key, 0, key.length)).isNull();
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
                int length =
                        into.add(keyGroup, round, state, key, 0, key.length, value, 0, key.length);
                perKeyGroup[keyGroup - 4]++;
                Runnable write =
                        () ->
                                single.recordWritten(
                                        keyGroup, state, key, 0, key.length, segment, length,
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
            batched.batchWritten(batch, segment);
        }
        assertThat(batched.liveEntries()).isEqualTo(single.liveEntries()).isGreaterThan(20_000);
        for (int round = 0; round < 6; round++) {
            assertThat(batched.stats("s" + round).liveBytes())
                    .isEqualTo(single.stats("s" + round).liveBytes());
        }
        for (int k = 0; k < 40_000; k++) {
            byte[] key = ("k" + k).getBytes(StandardCharsets.UTF_8);
            for (int keyGroup = 4; keyGroup <= 7; keyGroup++) {
                assertThat(batched.latestSegment(keyGroup, 1, key, 0, key.length))
                        .isEqualTo(single.latestSegment(keyGroup, 1, key, 0, key.length));
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
            records.get(keyGroup).add(new Object[] {state, key, segment, length, tombstone});
            written.recordWritten(keyGroup, state, key, 0, key.length, segment, length, tombstone);
        }
        try (IndexRebuild rebuild = rebuilt.rebuild()) {
            for (int kg = 0; kg < 4; kg++) {
                List<Object[]> group = records.get(kg);
                for (int i = group.size() - 1; i >= 0; i--) {
                    Object[] r = group.get(i);
                    byte[] key = (byte[]) r[1];
                    rebuild.firstOf(
                            kg, (int) r[0], key, 0, key.length, rebuild.segmentId((String) r[2]),
                            (int) r[3], (boolean) r[4]);
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
                    assertThat(rebuilt.latestSegment(kg, state, key, 0, key.length))
                            .isEqualTo(written.latestSegment(kg, state, key, 0, key.length));
                }
            }
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
                index.recordWritten(0, 0, bytes, 0, bytes.length, segment, 30, false);
                latest.put(key, segment);
            }
            for (String key : new ArrayList<>(latest.keySet())) {
                if (key.startsWith("w" + (window - 1) + "-") && random.nextInt(10) > 0) {
                    byte[] bytes = key.getBytes(StandardCharsets.UTF_8);
                    index.recordWritten(0, 0, bytes, 0, bytes.length, segment, 0, true);
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
     * A compaction pass copies a record if the index places its entry in a compacted segment. A
     * run's entries move back to where they were if the run is dropped, unless a newer record
     * was indexed since; once a completed checkpoint holds the run, they stay.
     */
    @Test
    void aDroppedRunsEntriesGoBackWhereTheyWere() throws Exception {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 3));
        byte[] key = "word".getBytes(StandardCharsets.UTF_8);
        byte[] rewritten = "other".getBytes(StandardCharsets.UTF_8);
        index.batchAdded("s1", 100);
        index.recordWritten(1, 0, key, 0, key.length, "s1", 10, false);
        index.recordWritten(1, 0, rewritten, 0, rewritten.length, "s1", 11, false);
        SegmentSet compacted = index.segmentSet(Set.of("s1", "s2"));
        assertThat(index.latestIn(compacted, 1, 0, key, 0, key.length)).isTrue();
        assertThat(index.latestIn(index.segmentSet(Set.of("s3")), 1, 0, key, 0, key.length))
                .isFalse();

        BatchBuilder run = new BatchBuilder(1, KeyGroupRange.of(0, 3), List.of("count"));
        run.add(1, 1, 0, key, 0, key.length, new byte[8], 0, 8);
        run.add(1, 1, 0, rewritten, 0, rewritten.length, new byte[8], 0, 8);
        index.moved(run, compacted, "run-0");
        assertThat(index.latestSegment(1, 0, key, 0, key.length)).isEqualTo("run-0");
        assertThat(index.stats("s1").liveBytes()).isZero();
        index.recordWritten(1, 0, rewritten, 0, rewritten.length, "s3", 12, false);

        index.runDropped("run-0", Runnable::run);
        assertThat(index.latestSegment(1, 0, key, 0, key.length)).isEqualTo("s1");
        assertThat(index.latestSegment(1, 0, rewritten, 0, rewritten.length)).isEqualTo("s3");
        assertThat(index.stats("s1").liveBytes()).isEqualTo(10);

        index.moved(run, compacted, "run-1");
        index.runTaken("run-1");
        index.runDropped("run-1", Runnable::run);
        assertThat(index.latestSegment(1, 0, key, 0, key.length)).isEqualTo("run-1");
    }

    /**
     * Batches are indexed while compaction moves entries: an entry moved into the run may be
     * removed, and its number taken by an entry that then moves in too. Moving back, the later
     * move stands for that number.
     */
    @Test
    void aNumberTakenByAnotherMovedEntryGoesBackWhereThatEntryWas() throws Exception {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 3));
        byte[] first = "first".getBytes(StandardCharsets.UTF_8);
        byte[] second = "second".getBytes(StandardCharsets.UTF_8);
        SegmentSet compacted = index.segmentSet(Set.of("s1", "s2"));
        int run = index.segmentId("run-0");
        RunMoves moves = new RunMoves(run);
        KeyGroupIndex table = index.of(1);
        index.recordWritten(1, 0, first, 0, first.length, "s1", 10, false);
        table.moveIfStillIn(0, first, 0, first.length, compacted, run, 10, moves);
        index.recordWritten(1, 0, first, 0, first.length, "s3", 0, true);
        index.recordWritten(1, 0, second, 0, second.length, "s2", 20, false);
        table.moveIfStillIn(0, second, 0, second.length, compacted, run, 20, moves);
        assertThat(index.latestSegment(1, 0, second, 0, second.length)).isEqualTo("run-0");

        moves.moveBack();
        assertThat(index.latestSegment(1, 0, second, 0, second.length)).isEqualTo("s2");
        assertThat(index.latestSegment(1, 0, first, 0, first.length)).isNull();
    }

    /**
     * A segment is counted from the first batch added to it until {@link LogIndex#retain} leaves
     * it out; records indexed in it later, or entries moved into it by compaction, do not bring
     * it back (a run is counted once it is offered, a checkpoint's batch once it is remembered).
     */
    @Test
    void onlyAddingABatchMakesASegmentCounted() throws Exception {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 3));
        byte[] key = "word".getBytes(StandardCharsets.UTF_8);
        byte[] other = "other".getBytes(StandardCharsets.UTF_8);
        index.batchAdded("s1", 50);
        index.recordWritten(1, 0, key, 0, key.length, "s1", 10, false);
        index.retain(Set.of());
        index.recordWritten(1, 0, other, 0, other.length, "s1", 10, false);
        BatchBuilder run = new BatchBuilder(1, KeyGroupRange.of(0, 3), List.of("count"));
        int length = run.add(1, 1, 0, key, 0, key.length, new byte[8], 0, 8);
        index.moved(run, index.segmentSet(Set.of("s1")), "run-0");
        assertThat(index.segments()).isEmpty();
        assertThat(index.liveBytes()).isZero();

        index.batchAdded("run-0", 40);
        assertThat(index.segments()).extracting(SegmentStats::segment).containsExactly("run-0");
        assertThat(index.liveBytes()).isEqualTo(length);
        assertThat(index.totalBytes()).isEqualTo(40);
    }

    /** Compaction must not judge liveness before the index knows every written batch. */
    @Test
    void awaitUpdatesWaitsForBatchesIndexedInTheBackground() throws Exception {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 3));
        BatchBuilder batch = new BatchBuilder(7, KeyGroupRange.of(0, 3), List.of("count"));
        byte[] key = "word".getBytes(StandardCharsets.UTF_8);
        byte[] value = {42};
        batch.add(2, 7, 0, key, 0, key.length, value, 0, value.length);
        List<Runnable> queued = new ArrayList<>();
        index.batchWrittenLater(
                batch,
                new BatchLocation("s0", 8, 100, 7, 7, KeyGroupRange.of(0, 3)),
                false,
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
                                index.batchWrittenLater(
                                        batch,
                                        new BatchLocation("s0", 8, 100, 7, 7, KeyGroupRange.of(0, 3)),
                                        false,
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
}
