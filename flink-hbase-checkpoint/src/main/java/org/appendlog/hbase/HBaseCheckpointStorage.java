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

package org.appendlog.hbase;

import org.apache.flink.api.common.JobID;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.ConfigurableCheckpointStorage;
import org.apache.flink.runtime.state.filesystem.AbstractFsCheckpointStorageAccess;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.time.Duration;

/**
 * Checkpoint storage whose checkpoint state streams and {@code _metadata} are HBase rows, written
 * with a configurable WAL durability. Savepoints go to a file system directory ({@code
 * execution.checkpointing.savepoint-dir}), because they are meant to outlive and move between
 * storages.
 *
 * <p>Select it with {@code execution.checkpointing.storage:
 * org.appendlog.hbase.HBaseCheckpointStorageFactory} or set it in code, as Flink's {@code
 * FileSystemCheckpointStorage}: {@code new HBaseCheckpointStorage(quorum, table)} and the {@code
 * with...} setters, one per option of {@link HBaseCheckpointStorageOptions}. Options set in code
 * win over the cluster's and the job's configuration.
 */
public final class HBaseCheckpointStorage
        implements CheckpointStorage, ConfigurableCheckpointStorage {

    private static final long serialVersionUID = 1L;

    private static final Logger LOG = LoggerFactory.getLogger(HBaseCheckpointStorage.class);

    /** Options set on this instance; they win over the configuration in {@link #configure}. */
    private final Configuration explicitOptions;

    private final HBaseStorageSettings settings;
    @Nullable private final String savepointDirectory;

    /**
     * Checkpoints in {@code table} of the HBase cluster whose ZooKeeper quorum is {@code
     * zookeeperQuorum} (comma-separated host or host:port entries).
     */
    public HBaseCheckpointStorage(String zookeeperQuorum, String table) {
        this(options(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, zookeeperQuorum, table));
    }

    /** Checkpoints in {@code table} of the HBase cluster that {@code hbaseSiteFile} describes. */
    public static HBaseCheckpointStorage fromSiteFile(String hbaseSiteFile, String table) {
        return new HBaseCheckpointStorage(
                options(HBaseCheckpointStorageOptions.SITE_FILE, hbaseSiteFile, table));
    }

    /** The storage that {@code config} describes; fails naming the option if it is invalid. */
    static HBaseCheckpointStorage fromConfig(ReadableConfig config) {
        return new HBaseCheckpointStorage(Configuration.fromMap(config.toMap()));
    }

    private HBaseCheckpointStorage(Configuration options) {
        this.explicitOptions = options;
        this.settings = HBaseStorageSettings.fromConfig(options);
        this.savepointDirectory = options.get(CheckpointingOptions.SAVEPOINT_DIRECTORY);
    }

    private static Configuration options(ConfigOption<String> location, String value, String table) {
        Configuration options = new Configuration();
        options.set(location, value);
        options.set(HBaseCheckpointStorageOptions.TABLE, table);
        return options;
    }

    /** {@link HBaseCheckpointStorageOptions#SITE_FILE}. */
    public HBaseCheckpointStorage withSiteFile(String hbaseSiteFile) {
        return with(HBaseCheckpointStorageOptions.SITE_FILE, hbaseSiteFile);
    }

    /** {@link HBaseCheckpointStorageOptions#COLUMN_FAMILY}. */
    public HBaseCheckpointStorage withColumnFamily(String columnFamily) {
        return with(HBaseCheckpointStorageOptions.COLUMN_FAMILY, columnFamily);
    }

    /** {@link HBaseCheckpointStorageOptions#DURABILITY}. */
    public HBaseCheckpointStorage withDurability(WalDurability durability) {
        return with(HBaseCheckpointStorageOptions.DURABILITY, durability);
    }

    /** {@link HBaseCheckpointStorageOptions#WRITE_BUFFER_SIZE}. */
    public HBaseCheckpointStorage withWriteBufferSize(MemorySize size) {
        return with(HBaseCheckpointStorageOptions.WRITE_BUFFER_SIZE, size);
    }

    /** {@link HBaseCheckpointStorageOptions#CHUNK_SIZE}. */
    public HBaseCheckpointStorage withChunkSize(MemorySize size) {
        return with(HBaseCheckpointStorageOptions.CHUNK_SIZE, size);
    }

    /** {@link HBaseCheckpointStorageOptions#SALT_BUCKETS}. */
    public HBaseCheckpointStorage withSaltBuckets(int buckets) {
        return with(HBaseCheckpointStorageOptions.SALT_BUCKETS, buckets);
    }

    /** {@link HBaseCheckpointStorageOptions#INLINE_THRESHOLD}. */
    public HBaseCheckpointStorage withInlineThreshold(MemorySize threshold) {
        return with(HBaseCheckpointStorageOptions.INLINE_THRESHOLD, threshold);
    }

    /** {@link HBaseCheckpointStorageOptions#CLIENT_RETRIES}. */
    public HBaseCheckpointStorage withClientRetries(int retries) {
        return with(HBaseCheckpointStorageOptions.CLIENT_RETRIES, retries);
    }

    /** {@link HBaseCheckpointStorageOptions#CLIENT_TIMEOUT}. */
    public HBaseCheckpointStorage withClientTimeout(Duration timeout) {
        return with(HBaseCheckpointStorageOptions.CLIENT_TIMEOUT, timeout);
    }

    /** Where savepoints go ({@code execution.checkpointing.savepoint-dir}), a file system URI. */
    public HBaseCheckpointStorage withSavepointDirectory(String directory) {
        return with(CheckpointingOptions.SAVEPOINT_DIRECTORY, directory);
    }

    private <T> HBaseCheckpointStorage with(ConfigOption<T> option, T value) {
        Configuration options = new Configuration(explicitOptions);
        options.set(option, value);
        return new HBaseCheckpointStorage(options);
    }

    /** Fills every option not set on this instance from {@code config}. */
    @Override
    public HBaseCheckpointStorage configure(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        Configuration merged = Configuration.fromMap(config.toMap());
        merged.addAll(explicitOptions);
        HBaseCheckpointStorage configured = new HBaseCheckpointStorage(merged);
        configured.warnOfWalRisk(LOG);
        return configured;
    }

    HBaseStorageSettings settings() {
        return settings;
    }

    /** The table's name, as checkpoint pointers carry it. */
    public String getTable() {
        return settings.table;
    }

    /** The WAL durability of every checkpoint row. */
    public WalDurability getDurability() {
        return settings.durability;
    }

    @Override
    public CheckpointStorageAccess createCheckpointStorage(JobID jobId) {
        // Task managers create this before restoring: from here on, the hbase:// state handles
        // in restored metadata resolve to this table.
        CheckpointTables.register(settings);
        return new HBaseCheckpointStorageAccess(
                this,
                settings,
                jobId,
                savepointDirectory == null ? null : new Path(savepointDirectory));
    }

    /**
     * Resolves {@code hbase://<table>/<job-id>/<run>/chk-<n>} pointers (and those without a run,
     * of older versions) to retained checkpoints, and any other pointer as a file system savepoint
     * or checkpoint directory.
     */
    @Override
    public CompletedCheckpointStorageLocation resolveCheckpoint(String pointer) throws IOException {
        if (!HBaseCheckpointPointer.isHBasePointer(pointer)) {
            return AbstractFsCheckpointStorageAccess.resolveCheckpointPointer(pointer);
        }
        HBaseCheckpointPointer parsed;
        try {
            parsed = HBaseCheckpointPointer.parse(pointer);
        } catch (IllegalArgumentException e) {
            throw new IOException(e.getMessage(), e);
        }
        if (!parsed.table.equals(settings.table)) {
            throw new IOException(
                    "Checkpoint "
                            + pointer
                            + " is in HBase table '"
                            + parsed.table
                            + "' but this job's checkpoint storage uses table '"
                            + settings.table
                            + "'. Set '"
                            + HBaseCheckpointStorageOptions.TABLE.key()
                            + ": "
                            + parsed.table
                            + "' to restore it.");
        }
        Long metadataLength =
                CheckpointTables.open(settings)
                        .committedLength(RowKeys.metadataStream(parsed.checkpointDirectory()));
        if (metadataLength == null) {
            throw new FileNotFoundException(
                    "No completed checkpoint at "
                            + pointer
                            + ": HBase table '"
                            + settings.table
                            + "' has no committed _metadata for it (never completed, or discarded).");
        }
        return new HBaseCompletedCheckpointStorageLocation(settings, parsed, metadataLength);
    }

    /** Warns through {@code log} when the durability can lose rows of a completed checkpoint. */
    void warnOfWalRisk(Logger log) {
        String risk = walRisk(settings.durability);
        if (risk != null) {
            log.warn(
                    "Checkpoints to HBase table '{}' are written with {}: {}, and a restore from"
                            + " such a checkpoint fails. Use SYNC_WAL ('{}') unless losing"
                            + " checkpoints is acceptable.",
                    settings.table,
                    settings.durability,
                    risk,
                    HBaseCheckpointStorageOptions.DURABILITY.key());
        }
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

    @Override
    public String toString() {
        return "HBaseCheckpointStorage{"
                + settings
                + ", savepoints: "
                + (savepointDirectory == null ? "none" : savepointDirectory)
                + '}';
    }
}
