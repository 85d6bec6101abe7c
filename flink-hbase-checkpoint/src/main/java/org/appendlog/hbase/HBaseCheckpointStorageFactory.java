package org.appendlog.hbase;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.CheckpointStorageFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

/**
 * Creates the {@link HBaseCheckpointStorage} from {@code state.checkpoint-storage:
 * org.appendlog.hbase.HBaseCheckpointStorageFactory} and the {@code
 * state.checkpoint-storage.hbase.*} options.
 */
public final class HBaseCheckpointStorageFactory
        implements CheckpointStorageFactory<HBaseCheckpointStorage> {

    private static final Logger LOG = LoggerFactory.getLogger(HBaseCheckpointStorageFactory.class);

    @Override
    public HBaseCheckpointStorage createFromConfig(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        HBaseStorageSettings settings = HBaseStorageSettings.fromConfig(config);
        String risk = walRisk(settings.durability);
        if (risk != null) {
            LOG.warn(
                    "Checkpoints to HBase table '{}' are written with {}: {}, and a restore from"
                            + " such a checkpoint fails. Use SYNC_WAL ('{}') unless losing"
                            + " checkpoints is acceptable.",
                    settings.table,
                    settings.durability,
                    risk,
                    HBaseCheckpointStorageOptions.DURABILITY.key());
        }
        String savepointDirectory = config.get(CheckpointingOptions.SAVEPOINT_DIRECTORY);
        HBaseCheckpointStorage storage = new HBaseCheckpointStorage(settings, savepointDirectory);
        LOG.debug("Checkpoint storage is {}", storage);
        return storage;
    }

    /** What a region server crash can cost a completed checkpoint, or null if nothing. */
    @Nullable
    private static String walRisk(WalDurability durability) {
        switch (durability) {
            case SKIP_WAL:
                return "a region server crash loses every checkpoint row not yet flushed to disk";
            case ASYNC_WAL:
                return "HBase acknowledges a write before its WAL edit is written, so a region"
                        + " server crash can lose the last rows of a checkpoint that Flink already"
                        + " counts as completed";
            default:
                return null;
        }
    }
}
