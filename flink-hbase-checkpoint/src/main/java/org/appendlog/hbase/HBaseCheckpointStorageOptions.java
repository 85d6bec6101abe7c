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

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

import java.time.Duration;

/**
 * Configuration options of the HBase checkpoint storage, all under {@code
 * execution.checkpointing.hbase.}: Flink 1.20 moved checkpoint storage options from {@code
 * state.checkpoint-storage} to {@code execution.checkpointing}. Not under {@code
 * execution.checkpointing.storage.}, because that key is itself an option, and YAML cannot nest
 * keys under a key that has a value. The keys under {@code state.checkpoint-storage.hbase.} still
 * work, as deprecated keys.
 */
public final class HBaseCheckpointStorageOptions {

    static final String PREFIX = "execution.checkpointing.hbase.";

    static final String DEPRECATED_PREFIX = "state.checkpoint-storage.hbase.";

    public static final ConfigOption<String> ZOOKEEPER_QUORUM =
            ConfigOptions.key(PREFIX + "zookeeper.quorum")
                    .stringType()
                    .noDefaultValue()
                    .withDeprecatedKeys(DEPRECATED_PREFIX + "zookeeper.quorum")
                    .withDescription(
                            "ZooKeeper quorum of the HBase cluster that stores the checkpoints, as"
                                    + " comma-separated host or host:port entries (HBase's"
                                    + " 'hbase.zookeeper.quorum'). Overrides the quorum of the"
                                    + " hbase-site.xml given by '"
                                    + PREFIX
                                    + "site-file'. One of the two must be set.");

    public static final ConfigOption<String> SITE_FILE =
            ConfigOptions.key(PREFIX + "site-file")
                    .stringType()
                    .noDefaultValue()
                    .withDeprecatedKeys(DEPRECATED_PREFIX + "site-file")
                    .withDescription(
                            "Local path of an hbase-site.xml with the HBase client settings"
                                    + " (quorum, znode parent, security). Options set here take"
                                    + " precedence over it.");

    public static final ConfigOption<String> TABLE =
            ConfigOptions.key(PREFIX + "table")
                    .stringType()
                    .defaultValue("flink_checkpoints")
                    .withDeprecatedKeys(DEPRECATED_PREFIX + "table")
                    .withDescription(
                            "HBase table (default namespace) that holds the checkpoint rows. It is"
                                    + " created and pre-split if missing.");

    public static final ConfigOption<String> COLUMN_FAMILY =
            ConfigOptions.key(PREFIX + "column-family")
                    .stringType()
                    .defaultValue("s")
                    .withDeprecatedKeys(DEPRECATED_PREFIX + "column-family")
                    .withDescription(
                            "Column family of the checkpoint cells. A table created by the storage"
                                    + " keeps one version per cell.");

    public static final ConfigOption<WalDurability> DURABILITY =
            ConfigOptions.key(PREFIX + "durability")
                    .enumType(WalDurability.class)
                    .defaultValue(WalDurability.SYNC_WAL)
                    .withDeprecatedKeys(DEPRECATED_PREFIX + "durability")
                    .withDescription(
                            "Write-ahead-log durability of every checkpoint write: SYNC_WAL (the"
                                    + " WAL edit reaches the file system before the write is"
                                    + " acknowledged), FSYNC_WAL (also forced to disk), ASYNC_WAL"
                                    + " (the WAL is written in the background: a region server"
                                    + " crash can lose the last writes; logged as a warning),"
                                    + " SKIP_WAL (no WAL: a region server crash loses everything"
                                    + " not yet flushed; logged as a warning). Case-insensitive.");

    public static final ConfigOption<MemorySize> WRITE_BUFFER_SIZE =
            ConfigOptions.key(PREFIX + "write-buffer-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("4mb"))
                    .withDeprecatedKeys(DEPRECATED_PREFIX + "write-buffer-size")
                    .withDescription(
                            "Client-side buffer of the BufferedMutator per state stream; puts are"
                                    + " sent in batches of this size. Every stream is flushed"
                                    + " before its state handle is returned.");

    public static final ConfigOption<MemorySize> CHUNK_SIZE =
            ConfigOptions.key(PREFIX + "chunk-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("2mb"))
                    .withDeprecatedKeys(DEPRECATED_PREFIX + "chunk-size")
                    .withDescription(
                            "Largest cell a state stream is split into. Must stay below the"
                                    + " server's 'hbase.server.keyvalue.maxsize' and the client's"
                                    + " 'hbase.client.keyvalue.maxsize' (10 MB by default) by 1 kb"
                                    + " for the row key and cell header; a chunk size above the"
                                    + " client's limit fails the job's start. At most 64 mb.");

    public static final ConfigOption<Integer> SALT_BUCKETS =
            ConfigOptions.key(PREFIX + "salt-buckets")
                    .intType()
                    .defaultValue(16)
                    .withDeprecatedKeys(DEPRECATED_PREFIX + "salt-buckets")
                    .withDescription(
                            "Number of salt prefixes (1 to 256) that spread one checkpoint's rows"
                                    + " over regions; a new table is pre-split at each prefix. An"
                                    + " existing table keeps the count it was created with.");

    public static final ConfigOption<MemorySize> INLINE_THRESHOLD =
            ConfigOptions.key(PREFIX + "inline-threshold")
                    .memoryType()
                    .defaultValue(MemorySize.parse("20kb"))
                    .withDeprecatedKeys(DEPRECATED_PREFIX + "inline-threshold")
                    .withDescription(
                            "State streams up to this size are not written to HBase but kept"
                                    + " inside the checkpoint metadata, like Flink's"
                                    + " 'execution.checkpointing.data-inline-threshold'. At most"
                                    + " the chunk size and 1 mb.");

    public static final ConfigOption<Integer> CLIENT_RETRIES =
            ConfigOptions.key(PREFIX + "client.retries")
                    .intType()
                    .defaultValue(10)
                    .withDeprecatedKeys(DEPRECATED_PREFIX + "client.retries")
                    .withDescription(
                            "How often the HBase client retries an operation"
                                    + " ('hbase.client.retries.number').");

    public static final ConfigOption<Duration> CLIENT_TIMEOUT =
            ConfigOptions.key(PREFIX + "client.timeout")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(60))
                    .withDeprecatedKeys(DEPRECATED_PREFIX + "client.timeout")
                    .withDescription(
                            "Upper bound of one HBase operation including its retries"
                                    + " ('hbase.client.operation.timeout'), and of connecting to"
                                    + " the cluster: an unreachable quorum fails the job's start"
                                    + " after this time instead of hanging.");

    private HBaseCheckpointStorageOptions() {}
}
