package org.appendlog.cec;

import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.MiniClusterExtension;

/** The Flink mini cluster that the module's job tests run on: one TaskManager, four slots. */
final class CecMiniCluster {

    private CecMiniCluster() {}

    static MiniClusterExtension withFourSlots() {
        return new MiniClusterExtension(
                new MiniClusterResourceConfiguration.Builder()
                        .setNumberTaskManagers(1)
                        .setNumberSlotsPerTaskManager(4)
                        .build());
    }

    /**
     * A job that commits often (checkpoint every 100 ms), so that a test can stop it with a
     * savepoint soon after its first commit, and that fails at once instead of restarting.
     */
    static StreamExecutionEnvironment environment(int parallelism, Configuration config) {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(parallelism);
        env.enableCheckpointing(100);
        env.setRestartStrategy(RestartStrategies.noRestart());
        return env;
    }
}
