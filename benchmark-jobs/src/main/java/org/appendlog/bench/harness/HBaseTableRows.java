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

import org.apache.hadoop.hbase.Cell;
import org.apache.hadoop.hbase.CellUtil;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.util.Bytes;

import java.io.IOException;
import java.util.function.ObjLongConsumer;

/**
 * The cells of an HBase table, each with the size of its value: the checkpoint bytes the storage
 * keeps in the table (not HBase's own overhead: keys, WAL, HFile blocks). The region server sends
 * only each value's length ({@link KeyOnlyFilter} with lengths as values), not the data.
 */
final class HBaseTableRows implements StoredEntries {

    private final Connection connection;
    private final TableName table;

    HBaseTableRows(Connection connection, TableName table) {
        this.connection = connection;
        this.table = table;
    }

    @Override
    public void list(ObjLongConsumer<String> entry) throws IOException {
        // the checkpoint storage creates the table when the job starts
        try (Admin admin = connection.getAdmin()) {
            if (!admin.tableExists(table)) {
                return;
            }
        }
        try (Table rows = connection.getTable(table);
                ResultScanner scanner = rows.getScanner(new Scan().setFilter(new KeyOnlyFilter(true)))) {
            for (Result result : scanner) {
                for (Cell cell : result.rawCells()) {
                    entry.accept(
                            "hbase://" + table.getNameAsString() + "/"
                                    + Bytes.toStringBinary(CellUtil.cloneRow(cell)) + "/"
                                    + Bytes.toStringBinary(CellUtil.cloneFamily(cell)) + ":"
                                    + Bytes.toStringBinary(CellUtil.cloneQualifier(cell)),
                            Bytes.toInt(cell.getValueArray(), cell.getValueOffset(), cell.getValueLength()));
                }
            }
        }
    }
}
