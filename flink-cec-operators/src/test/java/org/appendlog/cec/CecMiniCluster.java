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

package org.appendlog.cec;

import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;

import java.io.File;

/** The Flink mini cluster that the module's job tests run on: one TaskManager, four slots. */
public final class CecMiniCluster {

    private CecMiniCluster() {}

    public static MiniClusterExtension withFourSlots() {
        return withFourSlots(new Configuration());
    }

    /** The mini cluster with the cluster configuration {@code config}. */
    public static MiniClusterExtension withFourSlots(Configuration config) {
        return new MiniClusterExtension(
                new MiniClusterResourceConfiguration.Builder()
                        .setConfiguration(config)
                        .setNumberTaskManagers(1)
                        .setNumberSlotsPerTaskManager(4)
                        .build());
    }

    /**
     * A job that commits often (checkpoint every 100 ms), so that a test can stop it with a
     * savepoint soon after its first commit, and that fails at once instead of restarting.
     */
    public static StreamExecutionEnvironment environment(int parallelism, Configuration config) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(parallelism);
        env.enableCheckpointing(100);
        env.setRestartStrategy(RestartStrategies.noRestart());
        return env;
    }

    /**
     * Stops {@code job} with a canonical savepoint in {@code savepoints} once its stream in {@code
     * dir} has a commit (so the savepoint comes in the middle of a paced input); returns a
     * configuration that restores from it.
     */
    public static Configuration stopAfterFirstCommit(JobClient job, File dir, File savepoints, boolean drain)
            throws Exception {
        CommittedResults.awaitFirstCommit(dir);
        String savepoint =
                job.stopWithSavepoint(drain, savepoints.toURI().toString(), SavepointFormatType.CANONICAL).get();
        Configuration restore = new Configuration();
        restore.set(StateRecoveryOptions.SAVEPOINT_PATH, savepoint);
        return restore;
    }
}
