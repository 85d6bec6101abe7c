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

import org.apache.flink.api.common.JobID;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.state.KeyGroupsSavepointStateHandle;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job moves between {@code hashmap}, {@code rocksdb} and appendlog through a canonical
 * savepoint: every key resumes on the new backend from exactly its count in the savepoint and
 * ends at its exact count.
 */
class BackendSwitchTest {

    private static final CountingJob JOB = new CountingJob(18_000, 4_000);
    private static final String APPENDLOG = "appendlog";

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusterJobs.cluster();

    @TempDir Path tmp;

    @ParameterizedTest(name = "{0} -> {1}")
    @CsvSource({
        "hashmap, appendlog",
        "rocksdb, appendlog",
        "appendlog, hashmap",
        "appendlog, rocksdb"
    })
    void canonicalSavepointMovesStateExactly(
            String from, String to, @InjectClusterClient ClusterClient<?> client)
            throws Exception {
        CountingJobRuns.Stopped stopped =
                CountingJobRuns.stopMidStream(
                        client,
                        JOB,
                        configFor(from),
                        2,
                        tmp.resolve("savepoints").toUri().toString(),
                        SavepointFormatType.CANONICAL);
        assertThat(SnapshotMetadata.load(stopped.savepoint).keyedStateHandles())
                .as("keyed state in the canonical savepoint of %s", from)
                .isNotEmpty()
                .allMatch(KeyGroupsSavepointStateHandle.class::isInstance);
        assertThat(ranOnAppendLog(stopped.jobId))
                .as("first job ran on appendlog")
                .isEqualTo(from.equals(APPENDLOG));

        CountingJobRuns.Resumed resumed =
                CountingJobRuns.resumeToEnd(
                        client,
                        JOB,
                        configFor(to),
                        2,
                        SavepointRestoreSettings.forPath(stopped.savepoint));
        assertThat(ranOnAppendLog(resumed.jobId))
                .as("resumed job ran on appendlog")
                .isEqualTo(to.equals(APPENDLOG));
        assertThat(resumed.restored)
                .as("per key, the count restored on %s from the savepoint of %s", to, from)
                .isEqualTo(stopped.counts);
    }

    private Configuration configFor(String backend) {
        Configuration config =
                CountingJob.jobConfig(tmp.resolve("checkpoints").toUri().toString());
        if (backend.equals(APPENDLOG)) {
            return CountingJob.withAppendLog(config, logDir().toUri().toString());
        }
        config.set(StateBackendOptions.STATE_BACKEND, backend);
        return config;
    }

    private Path logDir() {
        return tmp.resolve("log");
    }

    /** Appendlog keeps each job's log under {@code <log dir>/<job id>}. */
    private boolean ranOnAppendLog(JobID jobId) {
        return Files.isDirectory(logDir().resolve(jobId.toHexString()));
    }
}
