package org.appendlog.statebackend.index;

import org.apache.flink.runtime.state.KeyGroupRange;

import org.junit.jupiter.api.Test;

import java.nio.charset.StandardCharsets;
import java.util.HashMap;
import java.util.Map;
import java.util.Random;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

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
}
