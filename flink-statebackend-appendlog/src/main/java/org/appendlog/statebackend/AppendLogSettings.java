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

import org.appendlog.statebackend.compaction.CompactionSettings;
import org.appendlog.statebackend.log.BatchCompression;
import org.appendlog.statebackend.log.FilePermissions;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.core.fs.Path;

import java.io.Serializable;
import java.net.URI;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.stream.Collectors;

/** The validated options of one {@link AppendLogStateBackend}. */
public final class AppendLogSettings implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String logDir;
    private final FilePermissions permissions;
    private final long segmentSize;
    private final boolean sealEveryBatch;
    private final long changeBufferSize;
    private final SyncMode syncMode;
    private final BatchCompression compression;
    private final int restoreParallelism;
    private final double fullCheckpointRatio;
    private final CompactionSettings compaction;

    public AppendLogSettings(
            String logDir,
            FilePermissions permissions,
            long segmentSize,
            boolean sealEveryBatch,
            long changeBufferSize,
            SyncMode syncMode,
            BatchCompression compression,
            int restoreParallelism,
            double fullCheckpointRatio,
            CompactionSettings compaction) {
        this.logDir = logDir;
        this.permissions = permissions;
        this.segmentSize = segmentSize;
        this.sealEveryBatch = sealEveryBatch;
        this.changeBufferSize = changeBufferSize;
        this.syncMode = syncMode;
        this.compression = compression;
        this.restoreParallelism = restoreParallelism;
        this.fullCheckpointRatio = fullCheckpointRatio;
        this.compaction = compaction;
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
        MemorySize segmentSize = read(config, AppendLogOptions.SEGMENT_SIZE);
        if (segmentSize.getBytes() < 1024) {
            throw invalid(
                    AppendLogOptions.SEGMENT_SIZE.key(),
                    "must be at least 1kb, was " + segmentSize.toHumanReadableString());
        }
        MemorySize changeBufferSize = read(config, AppendLogOptions.CHANGE_BUFFER_SIZE);
        if (changeBufferSize.getBytes() < 1024 * 1024) {
            throw invalid(
                    AppendLogOptions.CHANGE_BUFFER_SIZE.key(),
                    "must be at least 1mb, was " + changeBufferSize.toHumanReadableString());
        }
        SyncMode syncMode = readEnum(config, AppendLogOptions.SYNC_MODE, SyncMode.values());
        BatchCompression compression =
                readEnum(config, AppendLogOptions.COMPRESSION, BatchCompression.values());
        int parallelism = atLeastOne(config, AppendLogOptions.RESTORE_PARALLELISM);
        double fullRatio = read(config, AppendLogOptions.FULL_CHECKPOINT_RATIO);
        if (!(fullRatio > 0)) {
            throw invalid(
                    AppendLogOptions.FULL_CHECKPOINT_RATIO.key(),
                    "must be greater than 0, was " + fullRatio);
        }
        return new AppendLogSettings(
                dir,
                FilePermissions.of(
                        mode(config, AppendLogOptions.DIRECTORY_PERMISSIONS),
                        mode(config, AppendLogOptions.FILE_PERMISSIONS)),
                segmentSize.getBytes(),
                read(config, AppendLogOptions.SEAL_EVERY_BATCH),
                changeBufferSize.getBytes(),
                syncMode,
                compression,
                parallelism,
                fullRatio,
                compactionSettings(config));
    }

    private static CompactionSettings compactionSettings(ReadableConfig config) {
        boolean enabled = read(config, AppendLogOptions.COMPACTION_ENABLED);
        double ratio = read(config, AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO);
        if (!(ratio > 0 && ratio <= 1)) {
            throw invalid(
                    AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO.key(),
                    "must be greater than 0 and at most 1, was " + ratio);
        }
        Duration lag = read(config, AppendLogOptions.COMPACTION_MIN_LAG);
        if (lag.isNegative()) {
            throw invalid(
                    AppendLogOptions.COMPACTION_MIN_LAG.key(), "must not be negative, was " + lag);
        }
        long rate =
                read(config, AppendLogOptions.COMPACTION_IO_RATE_LIMIT)
                        .getBytes();
        int threads = atLeastOne(config, AppendLogOptions.COMPACTION_THREADS);
        int maxSegments = read(config, AppendLogOptions.COMPACTION_MAX_SEGMENTS);
        if (maxSegments < 2) {
            throw invalid(
                    AppendLogOptions.COMPACTION_MAX_SEGMENTS.key(),
                    "must be at least 2, was " + maxSegments);
        }
        return new CompactionSettings(enabled, ratio, lag, rate, threads, maxSegments);
    }

    static <T> T read(ReadableConfig config, ConfigOption<T> option) {
        try {
            return config.get(option);
        } catch (IllegalArgumentException e) {
            throw invalid(option.key(), e.getMessage());
        }
    }

    /** Reads an enum option; an invalid value fails with the list of valid ones. */
    private static <E extends Enum<E>> E readEnum(
            ReadableConfig config, ConfigOption<E> option, E[] values) {
        try {
            return config.get(option);
        } catch (IllegalArgumentException e) {
            throw invalid(
                    option.key(),
                    e.getMessage()
                            + " (one of "
                            + Arrays.stream(values)
                                    .map(v -> v.name().toLowerCase(Locale.ROOT))
                                    .collect(Collectors.joining(", "))
                            + ")");
        }
    }

    /** A permission mode option: 3 or 4 octal digits ({@code 700}). */
    private static short mode(ReadableConfig config, ConfigOption<String> option) {
        String value = read(config, option);
        Short mode = FilePermissions.parseMode(value);
        if (mode == null) {
            throw invalid(
                    option.key(),
                    "'" + value + "' is not a permission mode of 3 or 4 octal digits, such as 700");
        }
        return mode;
    }

    static int atLeastOne(ReadableConfig config, ConfigOption<Integer> option) {
        int value = read(config, option);
        if (value < 1) {
            throw invalid(option.key(), "must be at least 1, was " + value);
        }
        return value;
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

    static IllegalConfigurationException invalid(String key, String why) {
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

    /** The permissions of the directories and files the backend creates. */
    public FilePermissions permissions() {
        return permissions;
    }

    public long segmentSize() {
        return segmentSize;
    }

    /** Whether the options ask for sealed segments on any file system (object stores always). */
    public boolean sealEveryBatch() {
        return sealEveryBatch;
    }

    public long changeBufferSize() {
        return changeBufferSize;
    }

    public SyncMode syncMode() {
        return syncMode;
    }

    public BatchCompression compression() {
        return compression;
    }

    public int restoreParallelism() {
        return restoreParallelism;
    }

    public double fullCheckpointRatio() {
        return fullCheckpointRatio;
    }

    public CompactionSettings compaction() {
        return compaction;
    }

    @Override
    public String toString() {
        return "dir="
                + logDir
                + ", "
                + permissions
                + ", segment-size="
                + segmentSize
                + ", seal-every-batch="
                + sealEveryBatch
                + ", change-buffer-size="
                + changeBufferSize
                + ", sync-mode="
                + syncMode
                + ", compression="
                + compression
                + ", restore-parallelism="
                + restoreParallelism
                + ", full-checkpoint-ratio="
                + fullCheckpointRatio
                + ", compaction: "
                + compaction;
    }
}
