package org.appendlog.bench.backend;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

import java.util.Collection;

/** Keyed backends built outside a job, as a task of a fresh job builds them. */
public final class KeyedBackends {

    private KeyedBackends() {}

    /**
     * A backend of {@code Integer} keys for operator {@code operator}, owning all 128 key groups
     * (the maximum parallelism), restored from {@code handles}, reporting to {@code metrics}.
     */
    public static AbstractKeyedStateBackend<Integer> build(
            StateBackend stateBackend,
            String operator,
            MetricGroup metrics,
            Collection<KeyedStateHandle> handles)
            throws Exception {
        return build(stateBackend, operator, IntSerializer.INSTANCE, metrics, handles);
    }

    /** Likewise, for keys that {@code keys} serializes. */
    @SuppressWarnings("unchecked")
    public static <K> AbstractKeyedStateBackend<K> build(
            StateBackend stateBackend,
            String operator,
            TypeSerializer<K> keys,
            MetricGroup metrics,
            Collection<KeyedStateHandle> handles)
            throws Exception {
        JobID job = new JobID();
        Environment env = new MockEnvironmentBuilder().setJobID(job).build();
        return (AbstractKeyedStateBackend<K>)
                stateBackend.createKeyedStateBackend(
                        new KeyedStateBackendParametersImpl<>(
                                env,
                                job,
                                operator,
                                keys,
                                128,
                                KeyGroupRange.of(0, 127),
                                env.getTaskKvStateRegistry(),
                                TtlTimeProvider.DEFAULT,
                                metrics,
                                handles,
                                new CloseableRegistry()));
    }
}
