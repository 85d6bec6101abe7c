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

import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupsSavepointStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.test.junit5.InjectClusterClient;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Stop-with-savepoint of a per-key counting job on appendlog at parallelism 2, in both savepoint
 * formats, then restore at parallelism 3 and at 1: every key resumes from exactly the count it had
 * in the savepoint and ends at its exact count.
 */
class RescaleSavepointTest extends MidStreamSavepointTestBase {

    @EachFormat
    void restoresAtHigherAndLowerParallelismWithExactCounts(
            SavepointFormatType format, @InjectClusterClient ClusterClient<?> client)
            throws Exception {
        CountingJobRuns.Stopped stopped = stopMidStream(client, format);

        Class<? extends KeyedStateHandle> expectedHandle =
                format == SavepointFormatType.CANONICAL
                        ? KeyGroupsSavepointStateHandle.class
                        : IncrementalRemoteKeyedStateHandle.class;
        assertThat(SnapshotMetadata.load(stopped.savepoint).keyedStateHandles())
                .as("keyed state handles of the %s savepoint %s", format, stopped.savepoint)
                .isNotEmpty()
                .allMatch(expectedHandle::isInstance);

        for (int parallelism : new int[] {3, 1}) {
            CountingJobRuns.Resumed resumed =
                    CountingJobRuns.resumeToEnd(
                            client,
                            JOB,
                            config(),
                            parallelism,
                            SavepointRestoreSettings.forPath(stopped.savepoint));
            assertThat(resumed.restored)
                    .as("per key, the count restored at parallelism %d", parallelism)
                    .isEqualTo(stopped.counts);
        }
    }
}
