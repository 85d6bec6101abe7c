package org.appendlog.cec;

import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
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
}
