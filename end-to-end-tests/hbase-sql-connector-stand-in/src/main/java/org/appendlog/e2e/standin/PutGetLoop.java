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

package org.appendlog.e2e.standin;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseConfiguration;
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.util.Arrays;

/**
 * A plain HBase client of the connector's jar: puts a row and gets it back, one after another, in a
 * table of its own. Compiled against HBase's API and relocated with it by this module's shade, so that
 * it runs on the jar's relocated client, as Flink's HBase connector does.
 */
public final class PutGetLoop implements AutoCloseable {

    private static final byte[] FAMILY = Bytes.toBytes("f");
    private static final byte[] QUALIFIER = Bytes.toBytes("q");

    private final Connection connection;
    private final TableName table;

    /** Connects to the HBase of a ZooKeeper quorum ({@code host:port}) and creates the table if it is missing. */
    public PutGetLoop(String quorum, String table) throws IOException {
        Configuration conf = HBaseConfiguration.create();
        conf.set(HConstants.ZOOKEEPER_QUORUM, quorum);
        // A failed operation is reported within the test's time, not after HBase's default of 20 minutes.
        conf.setLong(HConstants.HBASE_CLIENT_OPERATION_TIMEOUT, 30_000);
        this.connection = ConnectionFactory.createConnection(conf);
        this.table = TableName.valueOf(table);
        try (Admin admin = connection.getAdmin()) {
            if (!admin.tableExists(this.table)) {
                admin.createTable(
                        TableDescriptorBuilder.newBuilder(this.table)
                                .setColumnFamily(ColumnFamilyDescriptorBuilder.of(FAMILY))
                                .build());
            }
        }
    }

    /**
     * Puts rows and gets each back until {@code seconds} have passed; prints a line for every failed one
     * (a class of another jar called with this jar's types fails with a {@link LinkageError}) and returns
     * {@code puts <n> failed <m>}.
     */
    public String run(long seconds) {
        long end = System.nanoTime() + seconds * 1_000_000_000L;
        long puts = 0;
        long failed = 0;
        try (Table rows = connection.getTable(table)) {
            while (System.nanoTime() < end) {
                puts++;
                byte[] row = Bytes.toBytes("row-" + puts);
                byte[] value = Bytes.toBytes("value-" + puts);
                try {
                    rows.put(new Put(row).addColumn(FAMILY, QUALIFIER, value));
                    byte[] read = rows.get(new Get(row)).getValue(FAMILY, QUALIFIER);
                    if (!Arrays.equals(read, value)) {
                        throw new IOException("row " + Bytes.toString(row) + " read back " + Bytes.toStringBinary(read));
                    }
                } catch (IOException | RuntimeException | LinkageError t) {
                    failed++;
                    System.out.println("put of the connector's client " + puts + " failed: " + t);
                    t.printStackTrace(System.out);
                }
            }
        } catch (IOException e) {
            failed++;
            System.out.println("put of the connector's client failed to close its table: " + e);
        }
        return "puts " + puts + " failed " + failed;
    }

    @Override
    public void close() throws IOException {
        connection.close();
    }
}
