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

package org.appendlog.bench.harness;

import org.appendlog.hbase.HBaseCheckpointStorageFactory;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * A run on HBase: checkpoints as rows of a table of the run's own through the project's HBase
 * checkpoint storage (default options, so {@code SYNC_WAL}); the backends' file-system logs on
 * local files ({@code logs}), because neither the appendlog log nor the changelog DSTL writes to
 * HBase.
 */
final class HBaseRunStorage implements RunStorage {

    private final String quorum;
    private final Connection connection;
    private final TableName table;
    private final FileRunStorage logs;

    HBaseRunStorage(String quorum, Connection connection, TableName table, FileRunStorage logs) {
        this.quorum = quorum;
        this.connection = connection;
        this.table = table;
        this.logs = logs;
    }

    @Override
    public void configureCheckpoints(Configuration conf) {
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, HBaseCheckpointStorageFactory.class.getName());
        conf.setString("execution.checkpointing.hbase.zookeeper.quorum", quorum);
        conf.setString("execution.checkpointing.hbase.table", table.getNameAsString());
    }

    @Override
    public String logDirectory() {
        return logs.logDirectory();
    }

    @Override
    public List<StoredEntries> contents() {
        List<StoredEntries> contents = new ArrayList<>(logs.contents());
        contents.add(new HBaseTableRows(connection, table));
        return contents;
    }

    /** Through one exclusive checkpoint stream of the storage: what a checkpoint can write per second. */
    @Override
    public double writeBandwidth(int megabytes) throws IOException {
        Configuration conf = new Configuration();
        configureCheckpoints(conf);
        return StorageBandwidth.ofCheckpointStream(
                new HBaseCheckpointStorageFactory().createFromConfig(conf, getClass().getClassLoader()),
                megabytes);
    }

    @Override
    public void delete() {
        logs.delete();
        try (Admin admin = connection.getAdmin()) {
            if (admin.tableExists(table)) {
                admin.disableTable(table);
                admin.deleteTable(table);
            }
        } catch (IOException e) {
            // the table goes with the HBase mini cluster at the end
        }
    }
}
