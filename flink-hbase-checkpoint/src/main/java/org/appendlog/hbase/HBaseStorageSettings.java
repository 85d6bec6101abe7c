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
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;

import java.io.Serializable;
import java.time.Duration;
import java.util.Arrays;
import java.util.Locale;
import java.util.regex.Pattern;

import static org.appendlog.hbase.HBaseCheckpointStorageOptions.CHUNK_SIZE;
import static org.appendlog.hbase.HBaseCheckpointStorageOptions.CLIENT_RETRIES;
import static org.appendlog.hbase.HBaseCheckpointStorageOptions.CLIENT_TIMEOUT;
import static org.appendlog.hbase.HBaseCheckpointStorageOptions.COLUMN_FAMILY;
import static org.appendlog.hbase.HBaseCheckpointStorageOptions.DURABILITY;
import static org.appendlog.hbase.HBaseCheckpointStorageOptions.INLINE_THRESHOLD;
import static org.appendlog.hbase.HBaseCheckpointStorageOptions.SALT_BUCKETS;
import static org.appendlog.hbase.HBaseCheckpointStorageOptions.SITE_FILE;
import static org.appendlog.hbase.HBaseCheckpointStorageOptions.TABLE;
import static org.appendlog.hbase.HBaseCheckpointStorageOptions.WRITE_BUFFER_SIZE;
import static org.appendlog.hbase.HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM;

/** The validated settings of one HBase checkpoint storage: where the table is and how to write it. */
final class HBaseStorageSettings implements Serializable {

    private static final long serialVersionUID = 1L;

    /** Table names go into {@code hbase://<table>/...} pointers, so no namespace and no URI specials. */
    private static final Pattern TABLE_NAME = Pattern.compile("[A-Za-z0-9_][A-Za-z0-9_.-]*");

    static final int MAX_SALT_BUCKETS = 256;

    /** Far above HBase's default 10 MB cell limit; larger chunks only cost client and server memory. */
    private static final MemorySize MAX_CHUNK_SIZE = MemorySize.parse("64mb");

    final HBaseClientSettings client;
    final String table;
    final String columnFamily;
    final WalDurability durability;
    final long writeBufferSize;
    final int chunkSize;
    final int saltBuckets;
    final int inlineThreshold;

    HBaseStorageSettings(
            HBaseClientSettings client,
            String table,
            String columnFamily,
            WalDurability durability,
            long writeBufferSize,
            int chunkSize,
            int saltBuckets,
            int inlineThreshold) {
        this.client = client;
        this.table = table;
        this.columnFamily = columnFamily;
        this.durability = durability;
        this.writeBufferSize = writeBufferSize;
        this.chunkSize = chunkSize;
        this.saltBuckets = saltBuckets;
        this.inlineThreshold = inlineThreshold;
    }

    static HBaseStorageSettings fromConfig(ReadableConfig config) {
        try {
            return read(config);
        } catch (IllegalArgumentException e) {
            // Flink's "Could not parse value 'x' for key 'y'": same exception type as range errors.
            throw new IllegalConfigurationException(e.getMessage(), e);
        }
    }

    private static HBaseStorageSettings read(ReadableConfig config) {
        String quorum = blankToNull(config.get(ZOOKEEPER_QUORUM));
        String siteFile = blankToNull(config.get(SITE_FILE));
        if (quorum == null && siteFile == null) {
            throw new IllegalConfigurationException(
                    "The HBase checkpoint storage needs to know its cluster: set '"
                            + ZOOKEEPER_QUORUM.key()
                            + "' (e.g. zk1:2181,zk2:2181) or '"
                            + SITE_FILE.key()
                            + "' (path of an hbase-site.xml).");
        }

        String table = config.get(TABLE).trim();
        if (!TABLE_NAME.matcher(table).matches()) {
            throw new IllegalConfigurationException(
                    "Invalid HBase table name '%s' in '%s': use letters, digits, '_', '.' and '-'"
                            + " (tables in the default namespace only).",
                    table,
                    TABLE.key());
        }
        String family = config.get(COLUMN_FAMILY).trim();
        if (family.isEmpty()) {
            throw new IllegalConfigurationException("'%s' must not be empty.", COLUMN_FAMILY.key());
        }

        int chunkSize = boundedSize(config, CHUNK_SIZE, 1, MAX_CHUNK_SIZE.getBytes());
        // Flink's stream factory, which savepoints use, refuses more (and inline handles travel
        // in the checkpoint acknowledgement).
        int inlineThreshold =
                boundedSize(
                        config,
                        INLINE_THRESHOLD,
                        0,
                        Math.min(chunkSize, FsCheckpointStreamFactory.MAX_FILE_STATE_THRESHOLD));
        long writeBufferSize =
                boundedSize(config, WRITE_BUFFER_SIZE, 1, MemorySize.MAX_VALUE.getBytes());

        int saltBuckets = config.get(SALT_BUCKETS);
        if (saltBuckets < 1 || saltBuckets > MAX_SALT_BUCKETS) {
            throw new IllegalConfigurationException(
                    "'%s' is %d but must be between 1 and %d.",
                    SALT_BUCKETS.key(),
                    saltBuckets,
                    MAX_SALT_BUCKETS);
        }
        int retries = config.get(CLIENT_RETRIES);
        if (retries < 0) {
            throw new IllegalConfigurationException(
                    "'%s' is %d but must not be negative.", CLIENT_RETRIES.key(), retries);
        }
        Duration timeout = config.get(CLIENT_TIMEOUT);
        if (timeout.isZero() || timeout.isNegative()) {
            throw new IllegalConfigurationException(
                    "'%s' is %s but must be positive.", CLIENT_TIMEOUT.key(), timeout);
        }

        return new HBaseStorageSettings(
                new HBaseClientSettings(quorum, siteFile, retries, timeout),
                table,
                family,
                durability(config),
                writeBufferSize,
                chunkSize,
                saltBuckets,
                inlineThreshold);
    }

    /** Parses the durability by name, case-insensitively, naming the allowed values on failure. */
    private static WalDurability durability(ReadableConfig config) {
        ConfigOption<String> raw =
                ConfigOptions.key(DURABILITY.key())
                        .stringType()
                        .noDefaultValue()
                        .withDeprecatedKeys(HBaseCheckpointStorageOptions.DEPRECATED_PREFIX + "durability");
        String name = config.get(raw);
        if (name == null) {
            return DURABILITY.defaultValue();
        }
        try {
            return WalDurability.valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalConfigurationException(
                    "Unknown WAL durability '%s' in '%s'. Use one of %s.",
                    name,
                    DURABILITY.key(),
                    Arrays.toString(WalDurability.values()));
        }
    }

    private static int boundedSize(
            ReadableConfig config, ConfigOption<MemorySize> option, long min, long max) {
        long bytes = config.get(option).getBytes();
        if (bytes < min || bytes > max) {
            throw new IllegalConfigurationException(
                    "'%s' is %d bytes but must be between %d and %d bytes.",
                    option.key(),
                    bytes,
                    min,
                    max);
        }
        return (int) Math.min(bytes, Integer.MAX_VALUE);
    }

    private static String blankToNull(String value) {
        return value == null || value.trim().isEmpty() ? null : value.trim();
    }

    @Override
    public String toString() {
        return "table '"
                + table
                + "' on "
                + client
                + " (family "
                + columnFamily
                + ", "
                + durability
                + ", chunks of "
                + chunkSize
                + " bytes, "
                + saltBuckets
                + " salt buckets, streams up to "
                + inlineThreshold
                + " bytes inline)";
    }
}
