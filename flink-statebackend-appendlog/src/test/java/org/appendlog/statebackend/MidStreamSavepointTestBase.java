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
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.lang.annotation.ElementType;
import java.lang.annotation.Retention;
import java.lang.annotation.RetentionPolicy;
import java.lang.annotation.Target;
import java.nio.file.Path;

/**
 * Tests that start from a savepoint of the {@link CountingJob} on appendlog, taken as {@link
 * #stopMidStream} says, in each savepoint format ({@link EachFormat}).
 */
abstract class MidStreamSavepointTestBase {

    static final CountingJob JOB = new CountingJob(20_000, 4_000);

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = MiniClusterJobs.cluster();

    @TempDir Path tmp;

    /** A test run once per savepoint format, which is its first parameter. */
    @Target(ElementType.METHOD)
    @Retention(RetentionPolicy.RUNTIME)
    @ParameterizedTest(name = "{0} savepoint")
    @EnumSource(
            value = SavepointFormatType.class,
            names = {"CANONICAL", "NATIVE"})
    @interface EachFormat {}

    /** The job's configuration: appendlog, its log and checkpoints under {@link #tmp}. */
    Configuration config() {
        return CountingJob.appendLogConfig(tmp);
    }

    /**
     * Runs the job from scratch at parallelism 2 and stops it mid-stream with a savepoint of
     * {@code format}.
     */
    CountingJobRuns.Stopped stopMidStream(ClusterClient<?> client, SavepointFormatType format)
            throws Exception {
        return CountingJobRuns.stopMidStream(
                client, JOB, config(), 2, tmp.resolve("savepoints").toUri().toString(), format);
    }
}
