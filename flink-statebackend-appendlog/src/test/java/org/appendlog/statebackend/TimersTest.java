package org.appendlog.statebackend;

import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** Timers (priority queue state) survive checkpoints, also restored at a smaller key-group range. */
class TimersTest {

    private static final TimerSerializer<Integer, VoidNamespace> SERIALIZER =
            new TimerSerializer<>(IntSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);

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
        AppendLogKeyedStateBackend<Integer> all =
                BackendHarness.build(stateBackend, Collections.singletonList(handle));
        AppendLogKeyedStateBackend<Integer> half =
                BackendHarness.build(
                        stateBackend, Collections.singletonList(handle), KeyGroupRange.of(0, 63));
        try {
            List<Long> restored = drain(all.create("event-timers", SERIALIZER));
            assertThat(restored).hasSize(999);
            assertThat(restored.get(0)).isEqualTo(9_002L);
            assertThat(restored.get(restored.size() - 1)).isEqualTo(10_000L);
            List<Long> ofHalf = drain(half.create("event-timers", SERIALIZER));
            assertThat(ofHalf).isNotEmpty().hasSizeLessThan(999);
        } finally {
            all.dispose();
            half.dispose();
        }
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
