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
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

/** Independent look at a checkpoint table: a full scan, without the storage's own key code. */
final class TableRows {

    private TableRows() {}

    /**
     * The key fragment {@code <job-id>/<run>/chk-<n>/} of all rows of a checkpoint, from its
     * pointer {@code hbase://<table>/<job-id>/<run>/chk-<n>} (a location's {@code toString()}).
     */
    static String directoryOf(Object pointer) {
        String uri = pointer.toString();
        return uri.substring(uri.indexOf('/', "hbase://".length()) + 1) + "/";
    }

    /** Row keys of the table that contain {@code fragment}, e.g. a job id. */
    static List<String> rowsContaining(Connection connection, String table, String fragment)
            throws IOException {
        List<String> rows = new ArrayList<>();
        for (Result result : scan(connection, table, new Scan().setFilter(new KeyOnlyFilter()))) {
            String row = Bytes.toString(result.getRow());
            if (row.contains(fragment)) {
                rows.add(row);
            }
        }
        return rows;
    }

    /**
     * Bytes stored per stream key for the chunk rows whose key contains {@code fragment}, read
     * from the row layout {@code <salt>/<stream key>/<16 hex digit offset>}; commit rows ({@code
     * .../length}) hold no stream bytes and are left out.
     */
    static Map<String, Long> streamBytes(Connection connection, String table, String fragment)
            throws IOException {
        Map<String, Long> bytes = new TreeMap<>();
        for (Result result : scan(connection, table, new Scan())) {
            String row = Bytes.toString(result.getRow());
            String last = row.substring(row.lastIndexOf('/') + 1);
            if (!row.contains(fragment) || !last.matches("[0-9a-f]{16}")) {
                continue;
            }
            String stream = row.substring(row.indexOf('/') + 1, row.lastIndexOf('/'));
            long length = 0;
            for (Cell cell : result.rawCells()) {
                length += CellUtil.cloneValue(cell).length;
            }
            bytes.merge(stream, length, Long::sum);
        }
        return bytes;
    }

    /** All rows; none while the storage has not created the table yet (a job's first checkpoint does). */
    private static List<Result> scan(Connection connection, String table, Scan scan)
            throws IOException {
        List<Result> results = new ArrayList<>();
        TableName name = TableName.valueOf(table);
        try (Admin admin = connection.getAdmin()) {
            if (!admin.tableExists(name)) {
                return results;
            }
        }
        try (Table t = connection.getTable(name);
                ResultScanner scanner = t.getScanner(scan)) {
            for (Result result : scanner) {
                results.add(result);
            }
        }
        return results;
    }
}
