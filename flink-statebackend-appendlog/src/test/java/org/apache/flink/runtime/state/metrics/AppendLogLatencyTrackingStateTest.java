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

package org.apache.flink.runtime.state.metrics;

import org.appendlog.statebackend.AppendLogStateBackend;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateLatencyTrackOptions;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.operators.testutils.DummyEnvironment;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;
import org.apache.flink.api.common.state.MapStateDescriptor;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SharedStateRegistryImpl;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collection;
import java.util.Collections;
import java.util.HashMap;
import java.util.Map;
import java.util.concurrent.RunnableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink's state latency tracking ({@code state.latency-track.*}) over every kind of appendlog
 * state: Flink's own cases from flink-runtime's test jar, which count each access of the tracked
 * states, run against this backend configured as a user would configure it; and that writes
 * through those wrappers reach the log.
 *
 * <p>In Flink's package, because those cases are package-private.
 */
class AppendLogLatencyTrackingStateTest {

    private static final int MAX_PARALLELISM = 128;

    @TempDir Path logDir;

    /** The backend the cases build, in place of Flink's heap backend, with the same options. */
    private <K> AbstractKeyedStateBackend<K> latencyTracked(TypeSerializer<K> keySerializer)
            throws Exception {
        return latencyTracked(keySerializer, Collections.emptyList());
    }

    private <K> AbstractKeyedStateBackend<K> latencyTracked(
            TypeSerializer<K> keySerializer, Collection<KeyedStateHandle> restored)
            throws Exception {
        Configuration config = new Configuration();
        config.set(StateLatencyTrackOptions.LATENCY_TRACK_ENABLED, true);
        config.set(
                StateLatencyTrackOptions.LATENCY_TRACK_SAMPLE_INTERVAL,
                LatencyTrackingStateTestBase.SAMPLE_INTERVAL);
        config.set(StateLatencyTrackOptions.LATENCY_TRACK_HISTORY_SIZE, 1_000_000);
        AppendLogStateBackend backend =
                new AppendLogStateBackend(logDir.toUri().toString())
                        .configure(config, Thread.currentThread().getContextClassLoader());
        Environment env = new DummyEnvironment();
        return backend.createKeyedStateBackend(
                new KeyedStateBackendParametersImpl<>(
                        env,
                        new JobID(),
                        "latency-tracked",
                        keySerializer,
                        MAX_PARALLELISM,
                        KeyGroupRange.of(0, MAX_PARALLELISM - 1),
                        env.getTaskKvStateRegistry(),
                        TtlTimeProvider.DEFAULT,
                        new UnregisteredMetricsGroup(),
                        restored,
                        new CloseableRegistry()));
    }

    /**
     * Writes through the latency-tracking wrappers reach the log: two checkpoints, the second
     * incremental, restore every value and map entry written before them.
     */
    @Test
    void writesThroughTheTrackedStatesAreCheckpointed() throws Exception {
        ValueStateDescriptor<Long> values = new ValueStateDescriptor<>("values", Types.LONG);
        MapStateDescriptor<Integer, String> maps =
                new MapStateDescriptor<>("maps", Types.INT, Types.STRING);
        // Resolves the placeholders of the second checkpoint, as the JobManager does.
        SharedStateRegistry registry = new SharedStateRegistryImpl();
        KeyedStateHandle second;
        try (AbstractKeyedStateBackend<Integer> backend = latencyTracked(IntSerializer.INSTANCE)) {
            org.apache.flink.api.common.state.ValueState<Long> value =
                    backend.getPartitionedState(
                            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, values);
            org.apache.flink.api.common.state.MapState<Integer, String> map =
                    backend.getPartitionedState(
                            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, maps);
            assertThat(value).isInstanceOf(LatencyTrackingValueState.class);
            assertThat(map).isInstanceOf(LatencyTrackingMapState.class);
            for (int key = 0; key < 1_000; key++) {
                backend.setCurrentKey(key);
                value.update((long) key);
                map.put(key, "first " + key);
            }
            KeyedStateHandle first = checkpoint(backend, registry, 1);
            for (int key = 0; key < 1_000; key += 10) {
                backend.setCurrentKey(key);
                value.update(-1L);
                map.put(key + 1, "second " + key);
            }
            second = checkpoint(backend, registry, 2);
            assertThat(second.getCheckpointedSize())
                    .as("the second checkpoint carries the tenth of the keys rewritten since")
                    .isLessThan(first.getCheckpointedSize() / 2);
        }
        try (AbstractKeyedStateBackend<Integer> restored =
                latencyTracked(IntSerializer.INSTANCE, Collections.singletonList(second))) {
            org.apache.flink.api.common.state.ValueState<Long> value =
                    restored.getPartitionedState(
                            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, values);
            org.apache.flink.api.common.state.MapState<Integer, String> map =
                    restored.getPartitionedState(
                            VoidNamespace.INSTANCE, VoidNamespaceSerializer.INSTANCE, maps);
            for (int key = 0; key < 1_000; key++) {
                restored.setCurrentKey(key);
                boolean rewritten = key % 10 == 0;
                assertThat(value.value())
                        .as("value of key %d", key)
                        .isEqualTo(rewritten ? -1L : key);
                Map<Integer, String> expected = new HashMap<>();
                expected.put(key, "first " + key);
                if (rewritten) {
                    expected.put(key + 1, "second " + key);
                }
                Map<Integer, String> entries = new HashMap<>();
                map.entries().forEach(e -> entries.put(e.getKey(), e.getValue()));
                assertThat(entries).as("map of key %d", key).isEqualTo(expected);
            }
        }
    }

    /** Takes checkpoint {@code id}, registers and confirms it, as the coordinator would. */
    private static KeyedStateHandle checkpoint(
            AbstractKeyedStateBackend<Integer> backend, SharedStateRegistry registry, long id)
            throws Exception {
        RunnableFuture<SnapshotResult<KeyedStateHandle>> snapshot =
                backend.snapshot(
                        id,
                        id,
                        new MemCheckpointStreamFactory(Integer.MAX_VALUE),
                        CheckpointOptions.forCheckpointWithDefaultLocation());
        snapshot.run();
        KeyedStateHandle handle = snapshot.get().getJobManagerOwnedSnapshot();
        registry.registerAll(Collections.singletonList(handle), id);
        backend.notifyCheckpointComplete(id);
        return handle;
    }

    @Nested
    class ValueState extends LatencyTrackingValueStateTest {
        @Override
        protected AbstractKeyedStateBackend<Integer> createKeyedBackend(
                TypeSerializer<Integer> keySerializer) throws Exception {
            return latencyTracked(keySerializer);
        }
    }

    @Nested
    class ListState extends LatencyTrackingListStateTest {
        @Override
        protected AbstractKeyedStateBackend<Integer> createKeyedBackend(
                TypeSerializer<Integer> keySerializer) throws Exception {
            return latencyTracked(keySerializer);
        }
    }

    @Nested
    class MapState extends LatencyTrackingMapStateTest {
        @Override
        protected AbstractKeyedStateBackend<Integer> createKeyedBackend(
                TypeSerializer<Integer> keySerializer) throws Exception {
            return latencyTracked(keySerializer);
        }
    }

    @Nested
    class ReducingState extends LatencyTrackingReducingStateTest {
        @Override
        protected AbstractKeyedStateBackend<Integer> createKeyedBackend(
                TypeSerializer<Integer> keySerializer) throws Exception {
            return latencyTracked(keySerializer);
        }
    }

    @Nested
    class AggregatingState extends LatencyTrackingAggregatingStateTest {
        @Override
        protected AbstractKeyedStateBackend<Integer> createKeyedBackend(
                TypeSerializer<Integer> keySerializer) throws Exception {
            return latencyTracked(keySerializer);
        }
    }
}
