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

import org.junit.jupiter.api.Nested;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;
import java.util.Collections;

/**
 * Flink's state latency tracking ({@code state.latency-track.*}) over every kind of appendlog
 * state: Flink's own cases from flink-runtime's test jar, which count each access of the tracked
 * states, run against this backend configured as a user would configure it.
 *
 * <p>In Flink's package, because those cases are package-private.
 */
class AppendLogLatencyTrackingStateTest {

    private static final int MAX_PARALLELISM = 128;

    @TempDir Path logDir;

    /** The backend the cases build, in place of Flink's heap backend, with the same options. */
    private <K> AbstractKeyedStateBackend<K> latencyTracked(TypeSerializer<K> keySerializer)
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
                        Collections.emptyList(),
                        new CloseableRegistry()));
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
