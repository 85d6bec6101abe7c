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

package org.appendlog.bench.backend;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.core.fs.CloseableRegistry;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.execution.Environment;
import org.apache.flink.runtime.operators.testutils.MockEnvironmentBuilder;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStreamFactory;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedStateBackendParametersImpl;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;
import org.apache.flink.runtime.state.ttl.TtlTimeProvider;

import java.io.IOException;
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
        return build(
                stateBackend, operator, IntSerializer.INSTANCE, KeyGroupRange.of(0, 127), metrics, handles);
    }

    /**
     * A backend of keys that {@code keys} serializes, for a subtask that owns {@code owned} of the
     * 128 key groups.
     */
    @SuppressWarnings("unchecked")
    public static <K> AbstractKeyedStateBackend<K> build(
            StateBackend stateBackend,
            String operator,
            TypeSerializer<K> keys,
            KeyGroupRange owned,
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
                                owned,
                                env.getTaskKvStateRegistry(),
                                TtlTimeProvider.DEFAULT,
                                metrics,
                                handles,
                                new CloseableRegistry()));
    }

    /**
     * Checkpoint streams into {@code dir}'s {@code checkpoints} folder, with Flink's default write
     * buffer and no state inlined in the metadata, as a job's file-system checkpoint storage.
     */
    public static CheckpointStreamFactory fileStreams(java.nio.file.Path dir) throws IOException {
        Path checkpoints = new Path(dir.resolve("checkpoints").toUri());
        return new FsCheckpointStreamFactory(
                FileSystem.get(checkpoints.toUri()),
                new Path(checkpoints, "chk"),
                new Path(checkpoints, "shared"),
                0,
                4096);
    }
}
