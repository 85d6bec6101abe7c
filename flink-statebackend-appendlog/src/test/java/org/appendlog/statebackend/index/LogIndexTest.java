package org.appendlog.statebackend.index;

import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.BatchLocation;

import org.apache.flink.runtime.state.KeyGroupRange;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
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

    @Test
    void agreesWithAMapThroughWritesRemovalsAndMoves() {
        LogIndex index = new LogIndex(KeyGroupRange.of(0, 3));
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
                index.moved(keyGroup, state, key, 0, key.length, Set.of("s1", "s2"), "run", 20);
                if (latest.containsKey(id) && Set.of("s1", "s2").contains(latest.get(id))) {
                    latest.put(id, "run");
                    lengths.put(id, 20);
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
                batch, new BatchLocation("s0", 8, 100, 7, 7, KeyGroupRange.of(0, 3)), queued::add);
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
