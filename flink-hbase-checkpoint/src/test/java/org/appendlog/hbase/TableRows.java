package org.appendlog.hbase;

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

/** Independent look at a checkpoint table: a full scan, without the storage's own key code. */
final class TableRows {

    private TableRows() {}

    /**
     * Row keys of the table that contain {@code fragment}, e.g. a job id; none while the storage
     * has not created the table yet (a job's first checkpoint does).
     */
    static List<String> rowsContaining(Connection connection, String table, String fragment)
            throws IOException {
        List<String> rows = new ArrayList<>();
        TableName name = TableName.valueOf(table);
        try (Admin admin = connection.getAdmin()) {
            if (!admin.tableExists(name)) {
                return rows;
            }
        }
        try (Table t = connection.getTable(name);
                ResultScanner scanner = t.getScanner(new Scan().setFilter(new KeyOnlyFilter()))) {
            for (Result result : scanner) {
                String row = Bytes.toString(result.getRow());
                if (row.contains(fragment)) {
                    rows.add(row);
                }
            }
        }
        return rows;
    }
}
