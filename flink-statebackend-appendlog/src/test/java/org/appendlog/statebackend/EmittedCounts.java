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

package org.appendlog.statebackend;

import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The {@link CountUpdate}s that {@link CollectingSink} received, and what they show about the
 * state they were computed from.
 *
 * <p>Exactly once is checked from the counts alone: a subtask attempt that processes its records
 * without failing emits, per key, every count from its starting state + 1 upwards exactly once. So
 * per attempt the counts of a key are gap-free and free of repeats, the lowest one minus one is the
 * count that attempt restored, and the highest count of a finished job is the key's final state.
 */
final class EmittedCounts {

    private static final List<CountUpdate> RECEIVED = new ArrayList<>();

    static void add(CountUpdate update) {
        synchronized (RECEIVED) {
            RECEIVED.add(update);
        }
    }

    static int received() {
        synchronized (RECEIVED) {
            return RECEIVED.size();
        }
    }

    /** Everything received since the last call, which starts the next collection. */
    static EmittedCounts take() {
        synchronized (RECEIVED) {
            EmittedCounts taken = new EmittedCounts(new ArrayList<>(RECEIVED));
            RECEIVED.clear();
            return taken;
        }
    }

    private final List<CountUpdate> updates;

    private EmittedCounts(List<CountUpdate> updates) {
        this.updates = Collections.unmodifiableList(updates);
    }

    int size() {
        return updates.size();
    }

    Set<Integer> attempts() {
        Set<Integer> attempts = new TreeSet<>();
        updates.forEach(u -> attempts.add(u.attempt));
        return attempts;
    }

    EmittedCounts ofAttempt(int attempt) {
        List<CountUpdate> selected = new ArrayList<>();
        for (CountUpdate u : updates) {
            if (u.attempt == attempt) {
                selected.add(u);
            }
        }
        return new EmittedCounts(selected);
    }

    /** Per key, the highest count emitted. */
    Map<Integer, Long> maxPerKey() {
        Map<Integer, Long> max = new TreeMap<>();
        updates.forEach(u -> max.merge(u.key, u.count, Math::max));
        return max;
    }

    /**
     * Asserts that these updates come from one failure-free stretch of processing (per key the
     * counts are gap-free, without repeats) and returns per key the count it started from.
     */
    Map<Integer, Long> startsPerKey() {
        Map<Integer, List<Long>> byKey = new TreeMap<>();
        updates.forEach(u -> byKey.computeIfAbsent(u.key, k -> new ArrayList<>()).add(u.count));
        Map<Integer, Long> starts = new TreeMap<>();
        byKey.forEach(
                (key, counts) -> {
                    Collections.sort(counts);
                    long first = counts.get(0);
                    for (int i = 0; i < counts.size(); i++) {
                        assertThat(counts.get(i))
                                .as("count #%d emitted for key %d (counts must run gap-free"
                                        + " without repeats from %d)", i, key, first)
                                .isEqualTo(first + i);
                    }
                    starts.put(key, first - 1);
                });
        return starts;
    }
}
