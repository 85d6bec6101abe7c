package org.appendlog.hbase;

import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.CheckpointStorageFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the {@link HBaseCheckpointStorage} from {@code execution.checkpointing.storage:
 * org.appendlog.hbase.HBaseCheckpointStorageFactory} and the {@code
 * execution.checkpointing.hbase.*} options.
 */
public final class HBaseCheckpointStorageFactory
        implements CheckpointStorageFactory<HBaseCheckpointStorage> {

    private static final Logger LOG = LoggerFactory.getLogger(HBaseCheckpointStorageFactory.class);

    @Override
    public HBaseCheckpointStorage createFromConfig(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        HBaseCheckpointStorage storage = HBaseCheckpointStorage.fromConfig(config);
        LOG.debug("Checkpoint storage is {}", storage);
        return storage;
    }
}
