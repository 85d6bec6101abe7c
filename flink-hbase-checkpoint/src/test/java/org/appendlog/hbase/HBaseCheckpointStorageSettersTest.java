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

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.CheckpointStorageLoader;
import org.apache.flink.runtime.state.hashmap.HashMapStateBackend;

import org.apache.hadoop.hbase.HConstants;
import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every option of the HBase checkpoint storage can be set in code and wins over the cluster's
 * configuration; the keys of earlier versions still configure it.
 */
class HBaseCheckpointStorageSettersTest {

    /** A setter call with a non-default value, and where the settings show that value. */
    private static final class Setter {
        final UnaryOperator<HBaseCheckpointStorage> set;
        final Function<HBaseStorageSettings, Object> read;
        final Object expected;

        Setter(UnaryOperator<HBaseCheckpointStorage> set, Function<HBaseStorageSettings, Object> read, Object expected) {
            this.set = set;
            this.read = read;
            this.expected = expected;
        }
    }

    private static final Map<ConfigOption<?>, Setter> SETTERS = new LinkedHashMap<>();

    static {
        SETTERS.put(
                HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM,
                new Setter(s -> s, s -> hbase(s, HConstants.ZOOKEEPER_QUORUM), "zk-code:2181"));
        SETTERS.put(HBaseCheckpointStorageOptions.TABLE, new Setter(s -> s, s -> s.table, "code_table"));
        SETTERS.put(
                HBaseCheckpointStorageOptions.SITE_FILE,
                new Setter(s -> s.withSiteFile("/code/hbase-site.xml"), s -> s.client.toString().endsWith("site file /code/hbase-site.xml"), true));
        SETTERS.put(
                HBaseCheckpointStorageOptions.COLUMN_FAMILY,
                new Setter(s -> s.withColumnFamily("cf"), s -> s.columnFamily, "cf"));
        SETTERS.put(
                HBaseCheckpointStorageOptions.DURABILITY,
                new Setter(s -> s.withDurability(WalDurability.FSYNC_WAL), s -> s.durability, WalDurability.FSYNC_WAL));
        SETTERS.put(
                HBaseCheckpointStorageOptions.WRITE_BUFFER_SIZE,
                new Setter(s -> s.withWriteBufferSize(MemorySize.parse("3mb")), s -> s.writeBufferSize, 3L << 20));
        SETTERS.put(
                HBaseCheckpointStorageOptions.CHUNK_SIZE,
                new Setter(s -> s.withChunkSize(MemorySize.parse("256kb")), s -> s.chunkSize, 256 << 10));
        SETTERS.put(
                HBaseCheckpointStorageOptions.SALT_BUCKETS,
                new Setter(s -> s.withSaltBuckets(7), s -> s.saltBuckets, 7));
        SETTERS.put(
                HBaseCheckpointStorageOptions.INLINE_THRESHOLD,
                new Setter(s -> s.withInlineThreshold(MemorySize.parse("2kb")), s -> s.inlineThreshold, 2 << 10));
        SETTERS.put(
                HBaseCheckpointStorageOptions.CLIENT_RETRIES,
                new Setter(s -> s.withClientRetries(9), s -> hbase(s, HConstants.HBASE_CLIENT_RETRIES_NUMBER), "9"));
        SETTERS.put(
                HBaseCheckpointStorageOptions.CLIENT_TIMEOUT,
                new Setter(
                        s -> s.withClientTimeout(Duration.ofSeconds(77)),
                        s -> hbase(s, HConstants.HBASE_CLIENT_OPERATION_TIMEOUT),
                        "77000"));
    }

    private static String hbase(HBaseStorageSettings settings, String key) {
        return settings.client.toHBaseConfiguration().get(key);
    }

    @Test
    void everyOptionHasASetter() throws IllegalAccessException {
        Set<ConfigOption<?>> options = new HashSet<>();
        for (Field field : HBaseCheckpointStorageOptions.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == ConfigOption.class) {
                options.add((ConfigOption<?>) field.get(null));
            }
        }
        assertThat(SETTERS.keySet()).containsExactlyInAnyOrderElementsOf(options);
    }

    @Test
    void aValueSetInCodeWinsOverTheConfiguration() throws Exception {
        Configuration cluster = new Configuration();
        cluster.set(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, "zk-cluster:2181");
        cluster.set(HBaseCheckpointStorageOptions.TABLE, "cluster_table");
        cluster.set(HBaseCheckpointStorageOptions.COLUMN_FAMILY, "x");
        cluster.set(HBaseCheckpointStorageOptions.DURABILITY, WalDurability.SYNC_WAL);
        cluster.set(HBaseCheckpointStorageOptions.WRITE_BUFFER_SIZE, MemorySize.parse("1mb"));
        cluster.set(HBaseCheckpointStorageOptions.CHUNK_SIZE, MemorySize.parse("128kb"));
        cluster.set(HBaseCheckpointStorageOptions.SALT_BUCKETS, 3);
        cluster.set(HBaseCheckpointStorageOptions.INLINE_THRESHOLD, MemorySize.parse("1kb"));
        cluster.set(HBaseCheckpointStorageOptions.CLIENT_RETRIES, 2);
        cluster.set(HBaseCheckpointStorageOptions.CLIENT_TIMEOUT, Duration.ofSeconds(5));
        cluster.set(CheckpointingOptions.SAVEPOINT_DIRECTORY, "file:///savepoints");

        HBaseCheckpointStorage inCode = new HBaseCheckpointStorage("zk-code:2181", "code_table");
        for (Setter setter : SETTERS.values()) {
            inCode = setter.set.apply(inCode);
        }
        // As Flink does with the storage a job sets in code.
        CheckpointStorage loaded =
                CheckpointStorageLoader.load(inCode, new HashMapStateBackend(), cluster, cluster, getClass().getClassLoader(), null);

        assertThat(loaded).isInstanceOf(HBaseCheckpointStorage.class);
        HBaseStorageSettings settings = ((HBaseCheckpointStorage) loaded).settings();
        SETTERS.forEach(
                (option, setter) ->
                        assertThat(setter.read.apply(settings)).as(option.key()).isEqualTo(setter.expected));
        // Not set in code: from the configuration.
        assertThat(loaded.toString()).contains("file:///savepoints");
    }

    @Test
    void theKeysOfEarlierVersionsStillWork() {
        Configuration old = new Configuration();
        old.setString("state.checkpoint-storage.hbase.zookeeper.quorum", "zk-old:2181");
        old.setString("state.checkpoint-storage.hbase.table", "old_table");
        old.setString("state.checkpoint-storage.hbase.durability", "fsync_wal");
        old.setString("state.checkpoint-storage.hbase.salt-buckets", "5");

        HBaseStorageSettings settings =
                new HBaseCheckpointStorageFactory().createFromConfig(old, getClass().getClassLoader()).settings();

        assertThat(hbase(settings, HConstants.ZOOKEEPER_QUORUM)).isEqualTo("zk-old:2181");
        assertThat(settings.table).isEqualTo("old_table");
        assertThat(settings.durability).isEqualTo(WalDurability.FSYNC_WAL);
        assertThat(settings.saltBuckets).isEqualTo(5);
        assertThat(HBaseCheckpointStorageOptions.TABLE.key()).isEqualTo("execution.checkpointing.hbase.table");
    }

    @Test
    void anInvalidValueFailsAtTheSetterNamingTheOption() {
        HBaseCheckpointStorage storage = new HBaseCheckpointStorage("zk:2181", "t");
        assertThatThrownBy(() -> storage.withSaltBuckets(100_000))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(HBaseCheckpointStorageOptions.SALT_BUCKETS.key());
        assertThatThrownBy(() -> new HBaseCheckpointStorage("zk:2181", "no/slash"))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(HBaseCheckpointStorageOptions.TABLE.key());
    }
}
