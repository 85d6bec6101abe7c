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

import org.appendlog.statebackend.snapshot.TimerFormat;

import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Timers (priority queue state) survive checkpoints, also restored at a smaller key-group range;
 * a window's timers are written grouped; manifests of the first format still restore.
 */
class TimersTest {

    private static final TimerSerializer<Integer, VoidNamespace> SERIALIZER =
            new TimerSerializer<>(IntSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);
    private static final TimerSerializer<Integer, TimeWindow> WINDOW_TIMERS =
            new TimerSerializer<>(IntSerializer.INSTANCE, new TimeWindow.Serializer());

    @TempDir Path logDir;

    @Test
    void timersAreRestoredExactly() throws Exception {
        AppendLogStateBackend stateBackend = new AppendLogStateBackend(logDir.toUri().toString());
        SharedStateRegistry registry = BackendHarness.newRegistry();
        IncrementalRemoteKeyedStateHandle handle;
        try (BackendHarness harness = BackendHarness.open(stateBackend, registry)) {
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> timers =
                    harness.backend.create("event-timers", SERIALIZER);
            for (int key = 0; key < 1_000; key++) {
                harness.put(key, key);
                timers.add(new TimerHeapInternalTimer<>(10_000L - key, key, VoidNamespace.INSTANCE));
            }
            harness.checkpoint(1);
            timers.poll();
            handle = harness.checkpoint(2);
        }
        restoreAllAndHalf(
                stateBackend,
                handle,
                (all, half) -> {
                    List<Long> restored = drain(all.create("event-timers", SERIALIZER));
                    assertThat(restored).hasSize(999);
                    assertThat(restored.get(0)).isEqualTo(9_002L);
                    assertThat(restored.get(restored.size() - 1)).isEqualTo(10_000L);
                    List<Long> ofHalf = drain(half.create("event-timers", SERIALIZER));
                    assertThat(ofHalf).isNotEmpty().hasSizeLessThan(999);
                });
    }

    /**
     * Window timers share their timestamp and namespace per window: written once per window, the
     * 30,000 timers of three windows take little more than their keys (4 bytes each), where each
     * timer in full takes 28.
     */
    @Test
    void windowTimersAreWrittenOncePerWindowAndRestoredExactly() throws Exception {
        AppendLogStateBackend stateBackend = new AppendLogStateBackend(logDir.toUri().toString());
        Set<String> written = new HashSet<>();
        IncrementalRemoteKeyedStateHandle handle;
        SharedStateRegistry registry = BackendHarness.newRegistry();
        try (BackendHarness harness = BackendHarness.open(stateBackend, registry)) {
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, TimeWindow>> timers =
                    harness.backend.create("window-timers", WINDOW_TIMERS);
            for (int key = 0; key < 10_000; key++) {
                for (int w = 0; w < 3; w++) {
                    TimeWindow window = new TimeWindow(w * 1_000L, (w + 1) * 1_000L);
                    timers.add(new TimerHeapInternalTimer<>(window.maxTimestamp(), key, window));
                    written.add(key + "@" + window);
                }
            }
            handle = harness.checkpoint(1);
        }
        assertThat(handle.getMetaDataStateHandle().getStateSize()).isLessThan(30_000 * 6);

        restoreAllAndHalf(
                stateBackend,
                handle,
                (all, half) -> {
                    assertThat(drainWindows(all.create("window-timers", WINDOW_TIMERS)))
                            .isEqualTo(written);
                    Set<String> ofHalf =
                            drainWindows(half.create("window-timers", WINDOW_TIMERS));
                    assertThat(ofHalf).isNotEmpty().hasSizeLessThan(written.size());
                    assertThat(written).containsAll(ofHalf);
                });
    }

    /** Checks made on a checkpoint restored with all key groups and with the first half. */
    @FunctionalInterface
    private interface RestoredTwice {
        void check(AppendLogKeyedStateBackend<Integer> all, AppendLogKeyedStateBackend<Integer> half)
                throws Exception;
    }

    private static void restoreAllAndHalf(
            AppendLogStateBackend stateBackend,
            IncrementalRemoteKeyedStateHandle handle,
            RestoredTwice checks)
            throws Exception {
        AppendLogKeyedStateBackend<Integer> all =
                BackendHarness.build(stateBackend, Collections.singletonList(handle));
        AppendLogKeyedStateBackend<Integer> half =
                BackendHarness.build(
                        stateBackend, Collections.singletonList(handle), KeyGroupRange.of(0, 63));
        try {
            checks.check(all, half);
        } finally {
            all.dispose();
            half.dispose();
        }
    }

    /** Manifest version 1 held each queue as a count and the elements, untagged. */
    @Test
    void timersOfAVersionOneManifestAreRestored() throws Exception {
        DataOutputSerializer out = new DataOutputSerializer(64);
        out.writeInt(3);
        for (int key = 0; key < 3; key++) {
            SERIALIZER.serialize(
                    new TimerHeapInternalTimer<>(100L + key, key, VoidNamespace.INSTANCE), out);
        }
        AppendLogStateBackend stateBackend = new AppendLogStateBackend(logDir.toUri().toString());
        SharedStateRegistry registry = BackendHarness.newRegistry();
        try (BackendHarness harness = BackendHarness.open(stateBackend, registry)) {
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> queue =
                    harness.backend.create("event-timers", SERIALIZER);
            TimerFormat.restore(
                    out.getCopyOfBuffer(),
                    1,
                    List.of(SERIALIZER),
                    List.of(queue),
                    KeyGroupRange.of(0, BackendHarness.MAX_PARALLELISM - 1),
                    BackendHarness.MAX_PARALLELISM);
            assertThat(drain(queue)).containsExactly(100L, 101L, 102L);
        }
    }

    private static Set<String> drainWindows(
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, TimeWindow>> queue) {
        Set<String> timers = new HashSet<>();
        TimerHeapInternalTimer<Integer, TimeWindow> timer;
        while ((timer = queue.poll()) != null) {
            assertThat(timer.getTimestamp()).isEqualTo(timer.getNamespace().maxTimestamp());
            timers.add(timer.getKey() + "@" + timer.getNamespace());
        }
        return timers;
    }

    private static List<Long> drain(
            KeyGroupedInternalPriorityQueue<TimerHeapInternalTimer<Integer, VoidNamespace>> queue) {
        List<Long> timestamps = new ArrayList<>();
        TimerHeapInternalTimer<Integer, VoidNamespace> timer;
        while ((timer = queue.poll()) != null) {
            timestamps.add(timer.getTimestamp());
        }
        return timestamps;
    }
}
