package org.appendlog.statebackend;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

/** The options of the append-log state backend, all under {@code state.backend.appendlog.}. */
public final class AppendLogOptions {

    public static final ConfigOption<String> LOG_DIR =
            ConfigOptions.key("state.backend.appendlog.dir")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Directory of the state log, on any Flink file system (hdfs://, file://, ...)."
                                    + " Defaults to '<state.checkpoints.dir>/appendlog'.");

    public static final ConfigOption<MemorySize> SEGMENT_SIZE =
            ConfigOptions.key("state.backend.appendlog.segment-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("64mb"))
                    .withDescription(
                            "Size at which the active log segment is closed and the next checkpoint"
                                    + " opens a new one.");

    public static final ConfigOption<SyncMode> SYNC_MODE =
            ConfigOptions.key("state.backend.appendlog.sync-mode")
                    .enumType(SyncMode.class)
                    .defaultValue(SyncMode.HSYNC)
                    .withDescription(
                            "How each checkpoint's batch is made durable before the checkpoint is"
                                    + " acknowledged: 'hsync' (to disk on every replica), 'hflush'"
                                    + " (to the replicas' memory) or 'none' (left to the file system).");

    public static final ConfigOption<Integer> RESTORE_PARALLELISM =
            ConfigOptions.key("state.backend.appendlog.restore-parallelism")
                    .intType()
                    .defaultValue(2)
                    .withDescription(
                            "Threads that read the log in parallel on restore; each reads a"
                                    + " contiguous slice of the owned key groups from every batch.");

    private AppendLogOptions() {}
}
