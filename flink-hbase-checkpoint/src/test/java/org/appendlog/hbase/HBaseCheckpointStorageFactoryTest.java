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
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.CheckpointStorageLoader;

import org.apache.flink.testutils.logging.LoggerAuditingExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.slf4j.event.Level;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.InstanceOfAssertFactories.STRING;

/** Selecting and configuring the storage; bad configuration fails naming what to fix. */
class HBaseCheckpointStorageFactoryTest {

    @RegisterExtension
    final LoggerAuditingExtension factoryLog =
            new LoggerAuditingExtension(HBaseCheckpointStorageFactory.class, Level.WARN);

    @RegisterExtension
    final LoggerAuditingExtension clientLog =
            new LoggerAuditingExtension(HBaseClientSettings.class, Level.WARN);

    private static Configuration valid() {
        Configuration conf = new Configuration();
        conf.set(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, "zk1:2181,zk2:2181");
        return conf;
    }

    private static HBaseStorageSettings settings(Configuration conf) {
        return HBaseStorageSettings.fromConfig(conf);
    }

    @Test
    void selectedByTheFactoryNameInTheConfiguration() throws Exception {
        Configuration conf = valid();
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, HBaseCheckpointStorageFactory.class.getName());
        CheckpointStorage storage =
                CheckpointStorageLoader.fromConfig(conf, getClass().getClassLoader(), null).get();
        assertThat(storage).isInstanceOf(HBaseCheckpointStorage.class);
        assertThat(storage.toString()).contains("zk1:2181,zk2:2181").contains("flink_checkpoints");
    }

    @Test
    void defaults() {
        HBaseStorageSettings settings = settings(valid());
        assertThat(settings.table).isEqualTo("flink_checkpoints");
        assertThat(settings.columnFamily).isEqualTo("s");
        assertThat(settings.durability).isEqualTo(WalDurability.SYNC_WAL);
        assertThat(settings.chunkSize).isEqualTo(2 * 1024 * 1024);
        assertThat(settings.writeBufferSize).isEqualTo(4 * 1024 * 1024);
        assertThat(settings.saltBuckets).isEqualTo(16);
        assertThat(settings.inlineThreshold).isEqualTo(20 * 1024);
    }

    @Test
    void needsAQuorumOrASiteFile() {
        assertThatThrownBy(() -> settings(new Configuration()))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM.key())
                .hasMessageContaining(HBaseCheckpointStorageOptions.SITE_FILE.key());
        Configuration siteOnly = new Configuration();
        siteOnly.set(HBaseCheckpointStorageOptions.SITE_FILE, "/etc/hbase/conf/hbase-site.xml");
        assertThat(settings(siteOnly).client).isNotNull();
    }

    /** Hadoop skips a missing resource silently; the client would go to another quorum. */
    @Test
    void aSiteFileThatIsNotThereIsReported(@TempDir Path dir) throws Exception {
        Configuration missing = new Configuration();
        missing.set(HBaseCheckpointStorageOptions.SITE_FILE, dir.resolve("hbase-sit.xml").toString());
        settings(missing).client.toHBaseConfiguration();
        assertThat(clientLog.getMessages())
                .singleElement(STRING)
                .contains("hbase-sit.xml")
                .contains(HBaseCheckpointStorageOptions.SITE_FILE.key());

        Path site = dir.resolve("hbase-site.xml");
        Files.writeString(
                site,
                "<configuration><property><name>hbase.zookeeper.quorum</name>"
                        + "<value>zk9</value></property></configuration>");
        Configuration present = new Configuration();
        present.set(HBaseCheckpointStorageOptions.SITE_FILE, site.toString());
        assertThat(settings(present).client.toHBaseConfiguration().get("hbase.zookeeper.quorum"))
                .isEqualTo("zk9");
        assertThat(clientLog.getMessages()).hasSize(1);
    }

    @Test
    void durabilityIsParsedByNameAndUnknownNamesAreRejected() {
        Configuration conf = valid();
        conf.setString(HBaseCheckpointStorageOptions.DURABILITY.key(), "async_wal");
        assertThat(settings(conf).durability).isEqualTo(WalDurability.ASYNC_WAL);

        conf.setString(HBaseCheckpointStorageOptions.DURABILITY.key(), "MAYBE_WAL");
        assertThatThrownBy(() -> settings(conf))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining("'MAYBE_WAL'")
                .hasMessageContaining(HBaseCheckpointStorageOptions.DURABILITY.key())
                .hasMessageContaining("SYNC_WAL, FSYNC_WAL, ASYNC_WAL, SKIP_WAL");
    }

    /** Both can lose rows of a completed checkpoint in a region server crash. */
    @ParameterizedTest
    @EnumSource(value = WalDurability.class, names = {"SKIP_WAL", "ASYNC_WAL"})
    void walDurabilitiesThatCanLoseRowsAreAcceptedWithAWarning(WalDurability durability) {
        Configuration conf = valid();
        conf.set(HBaseCheckpointStorageOptions.DURABILITY, durability);
        HBaseCheckpointStorage storage =
                new HBaseCheckpointStorageFactory().createFromConfig(conf, getClass().getClassLoader());

        assertThat(storage.toString()).contains(durability.name());
        assertThat(factoryLog.getMessages())
                .singleElement()
                .asString()
                .contains("written with " + durability.name())
                .contains("region server crash")
                .contains("flink_checkpoints")
                .contains(HBaseCheckpointStorageOptions.DURABILITY.key());
    }

    @Test
    void walDurabilitiesThatSurviveARegionServerCrashDoNotWarn() {
        for (WalDurability durability : new WalDurability[] {WalDurability.SYNC_WAL, WalDurability.FSYNC_WAL}) {
            Configuration conf = valid();
            conf.set(HBaseCheckpointStorageOptions.DURABILITY, durability);
            new HBaseCheckpointStorageFactory().createFromConfig(conf, getClass().getClassLoader());
        }
        assertThat(factoryLog.getMessages()).isEmpty();
    }

    @Test
    void sizesAndCountsOutOfRangeAreRejected() {
        Configuration inlineAboveChunk = valid();
        inlineAboveChunk.set(HBaseCheckpointStorageOptions.CHUNK_SIZE, MemorySize.parse("1mb"));
        inlineAboveChunk.set(HBaseCheckpointStorageOptions.INLINE_THRESHOLD, MemorySize.parse("2mb"));
        assertThatThrownBy(() -> settings(inlineAboveChunk))
                .hasMessageContaining(HBaseCheckpointStorageOptions.INLINE_THRESHOLD.key());

        // Savepoints go through Flink's file stream factory, which refuses more than 1 MiB.
        Configuration inlineAboveFlinksLimit = valid();
        inlineAboveFlinksLimit.set(HBaseCheckpointStorageOptions.CHUNK_SIZE, MemorySize.parse("4mb"));
        inlineAboveFlinksLimit.set(
                HBaseCheckpointStorageOptions.INLINE_THRESHOLD, MemorySize.parse("2mb"));
        assertThatThrownBy(() -> settings(inlineAboveFlinksLimit))
                .hasMessageContaining(HBaseCheckpointStorageOptions.INLINE_THRESHOLD.key())
                .hasMessageContaining("1048576");
        Configuration inlineAtFlinksLimit = valid();
        inlineAtFlinksLimit.set(
                HBaseCheckpointStorageOptions.INLINE_THRESHOLD, MemorySize.parse("1mb"));
        assertThat(settings(inlineAtFlinksLimit).inlineThreshold).isEqualTo(1024 * 1024);

        Configuration noSalt = valid();
        noSalt.set(HBaseCheckpointStorageOptions.SALT_BUCKETS, 0);
        assertThatThrownBy(() -> settings(noSalt))
                .hasMessageContaining(HBaseCheckpointStorageOptions.SALT_BUCKETS.key());

        Configuration namespaced = valid();
        namespaced.set(HBaseCheckpointStorageOptions.TABLE, "ns:checkpoints");
        assertThatThrownBy(() -> settings(namespaced))
                .hasMessageContaining("ns:checkpoints")
                .hasMessageContaining(HBaseCheckpointStorageOptions.TABLE.key());
    }

    @Test
    void pointersRoundTrip() {
        org.apache.flink.api.common.JobID job = new org.apache.flink.api.common.JobID();
        String run = RunId.random();
        String pointer = HBaseCheckpointPointer.of("t", job, run, 42).toString();
        assertThat(pointer).isEqualTo("hbase://t/" + job + "/" + run + "/chk-42");
        HBaseCheckpointPointer parsed = HBaseCheckpointPointer.parse(pointer + "/_metadata");
        assertThat(parsed.table).isEqualTo("t");
        assertThat(parsed.jobId).isEqualTo(job);
        assertThat(parsed.run).isEqualTo(run);
        assertThat(parsed.checkpointId).isEqualTo(42);
        assertThat(parsed.checkpointDirectory()).isEqualTo(job + "/" + run + "/chk-42");

        // As older versions wrote them, without a run.
        HBaseCheckpointPointer older = HBaseCheckpointPointer.parse("hbase://t/" + job + "/chk-7");
        assertThat(older.run).isNull();
        assertThat(older.checkpointDirectory()).isEqualTo(job + "/chk-7");
    }

    @Test
    void theRunReachesTheTasksInTheLocationReference() {
        String run = RunId.random();
        assertThat(run).matches(RunId.REGEX).isNotEqualTo(RunId.random());
        assertThat(RunId.fromReference(RunId.reference(run))).isEqualTo(run);
        assertThat(RunId.fromReference(org.apache.flink.runtime.state.CheckpointStorageLocationReference.getDefault()))
                .isNull();
    }
}
