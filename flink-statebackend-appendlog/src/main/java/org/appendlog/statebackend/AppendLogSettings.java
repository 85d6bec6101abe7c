package org.appendlog.statebackend;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.core.fs.Path;

import java.io.Serializable;
import java.net.URI;

/** The validated options of one {@link AppendLogStateBackend}. */
public final class AppendLogSettings implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String logDir;
    private final long segmentSize;
    private final SyncMode syncMode;
    private final int restoreParallelism;

    public AppendLogSettings(
            String logDir, long segmentSize, SyncMode syncMode, int restoreParallelism) {
        this.logDir = logDir;
        this.segmentSize = segmentSize;
        this.syncMode = syncMode;
        this.restoreParallelism = restoreParallelism;
    }

    /**
     * Reads and checks the options. A missing log directory is not an error here: it may still
     * come from the job's own configuration; {@link #logDirectory()} reports it when it is used.
     */
    public static AppendLogSettings fromConfig(ReadableConfig config) {
        String dir = config.getOptional(AppendLogOptions.LOG_DIR).orElse(null);
        if (dir == null) {
            dir =
                    config.getOptional(CheckpointingOptions.CHECKPOINTS_DIRECTORY)
                            .map(d -> new Path(d, "appendlog").toString())
                            .orElse(null);
        }
        if (dir != null) {
            checkUri(dir);
        }
        MemorySize segmentSize;
        try {
            segmentSize = config.get(AppendLogOptions.SEGMENT_SIZE);
        } catch (IllegalArgumentException e) {
            throw invalid(AppendLogOptions.SEGMENT_SIZE.key(), e.getMessage());
        }
        if (segmentSize.getBytes() < 1024) {
            throw invalid(
                    AppendLogOptions.SEGMENT_SIZE.key(),
                    "must be at least 1kb, was " + segmentSize.toHumanReadableString());
        }
        SyncMode syncMode;
        try {
            syncMode = config.get(AppendLogOptions.SYNC_MODE);
        } catch (IllegalArgumentException e) {
            throw invalid(
                    AppendLogOptions.SYNC_MODE.key(),
                    e.getMessage() + " (one of hsync, hflush, none)");
        }
        int parallelism;
        try {
            parallelism = config.get(AppendLogOptions.RESTORE_PARALLELISM);
        } catch (IllegalArgumentException e) {
            throw invalid(AppendLogOptions.RESTORE_PARALLELISM.key(), e.getMessage());
        }
        if (parallelism < 1) {
            throw invalid(
                    AppendLogOptions.RESTORE_PARALLELISM.key(),
                    "must be at least 1, was " + parallelism);
        }
        return new AppendLogSettings(dir, segmentSize.getBytes(), syncMode, parallelism);
    }

    private static void checkUri(String dir) {
        try {
            URI uri = new Path(dir).toUri();
            if (uri.getScheme() == null) {
                throw invalid(
                        AppendLogOptions.LOG_DIR.key(),
                        "'"
                                + dir
                                + "' has no scheme; write it as a URI such as file:///data/appendlog"
                                + " or hdfs://namenode:8020/flink/appendlog");
            }
        } catch (IllegalArgumentException e) {
            throw invalid(AppendLogOptions.LOG_DIR.key(), e.getMessage());
        }
    }

    private static IllegalConfigurationException invalid(String key, String why) {
        return new IllegalConfigurationException(
                "Invalid value for option '" + key + "': " + why);
    }

    public Path logDirectory() {
        if (logDir == null) {
            throw new IllegalConfigurationException(
                    "The appendlog state backend needs a log directory: set '"
                            + AppendLogOptions.LOG_DIR.key()
                            + "' (or the checkpoint directory '"
                            + CheckpointingOptions.CHECKPOINTS_DIRECTORY.key()
                            + "', formerly 'state.checkpoints.dir', under which it then uses"
                            + " 'appendlog/').");
        }
        return new Path(logDir);
    }

    public boolean hasLogDirectory() {
        return logDir != null;
    }

    public long segmentSize() {
        return segmentSize;
    }

    public SyncMode syncMode() {
        return syncMode;
    }

    public int restoreParallelism() {
        return restoreParallelism;
    }

    @Override
    public String toString() {
        return "dir="
                + logDir
                + ", segment-size="
                + segmentSize
                + ", sync-mode="
                + syncMode
                + ", restore-parallelism="
                + restoreParallelism;
    }
}
