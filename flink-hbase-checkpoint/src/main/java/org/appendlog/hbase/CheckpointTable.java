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

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.TableExistsException;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.BufferedMutator;
import org.apache.hadoop.hbase.client.BufferedMutatorParams;
import org.apache.hadoop.hbase.client.CheckAndMutate;
import org.apache.hadoop.hbase.client.ColumnFamilyDescriptorBuilder;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.client.Delete;
import org.apache.hadoop.hbase.client.Durability;
import org.apache.hadoop.hbase.client.Get;
import org.apache.hadoop.hbase.client.Put;
import org.apache.hadoop.hbase.client.Result;
import org.apache.hadoop.hbase.client.ResultScanner;
import org.apache.hadoop.hbase.client.Scan;
import org.apache.hadoop.hbase.client.Table;
import org.apache.hadoop.hbase.client.TableDescriptor;
import org.apache.hadoop.hbase.client.TableDescriptorBuilder;
import org.apache.hadoop.hbase.filter.FilterList;
import org.apache.hadoop.hbase.filter.FirstKeyOnlyFilter;
import org.apache.hadoop.hbase.filter.KeyOnlyFilter;
import org.apache.hadoop.hbase.filter.MultiRowRangeFilter;
import org.apache.hadoop.hbase.security.User;
import org.apache.hadoop.hbase.security.token.AuthenticationTokenIdentifier;
import org.apache.hadoop.hbase.util.Bytes;
import org.apache.hadoop.security.UserGroupInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.Closeable;
import java.io.FileNotFoundException;
import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.net.SocketTimeoutException;
import java.nio.channels.ClosedByInterruptException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.function.Supplier;

/**
 * One HBase table of checkpoint rows, on its own connection: creating it, and reading, committing
 * and deleting the rows of state streams. Writing goes through {@link ChunkedStreamWriter}.
 */
final class CheckpointTable implements Closeable {

    private static final Logger LOG = LoggerFactory.getLogger(CheckpointTable.class);

    /** Table property that remembers the salt bucket count, which every reader must agree on. */
    static final String SALT_BUCKETS_PROPERTY = "appendlog.checkpoint.salt-buckets";

    private static final byte[] DATA_QUALIFIER = Bytes.toBytes("d");

    private static final int DELETE_BATCH = 1000;

    /** HBase client's largest cell (HBase's {@code ConnectionConfiguration}), 10 MB by default. */
    private static final String MAX_CELL_SIZE_KEY = "hbase.client.keyvalue.maxsize";

    private static final long DEFAULT_MAX_CELL_SIZE = 10 * 1024 * 1024;

    /** Above a chunk's row key (about 130 bytes), family, qualifier and cell header. */
    private static final int CELL_OVERHEAD = 1024;

    /** How often a delete starts over after interrupts arrived during it, at most. */
    private static final int MAX_INTERRUPTED_DELETES = 10;

    private final Connection connection;
    private final TableName tableName;
    private final byte[] family;
    private final RowKeys keys;
    private final CheckpointTableMetrics metrics;
    private final RegionMoveRetry regionMoves;

    private CheckpointTable(
            Connection connection, TableName tableName, byte[] family, RowKeys keys, Configuration conf) {
        this.connection = connection;
        this.tableName = tableName;
        this.family = family;
        this.keys = keys;
        this.metrics = CheckpointTableMetrics.of(tableName.getNameAsString());
        this.regionMoves = new RegionMoveRetry(connection, tableName.getNameAsString(), conf);
    }

    /** What this process wrote to and deleted from the table. */
    CheckpointTableMetrics metrics() {
        return metrics;
    }

    /**
     * Connects as {@code user} and creates the table (pre-split, one version per cell) if it is
     * missing. Blocking. Fails first if the client would refuse a full chunk.
     */
    static CheckpointTable connect(HBaseStorageSettings settings, UserGroupInformation user)
            throws IOException {
        Configuration conf = settings.client.toHBaseConfiguration();
        checkChunkFitsACell(settings, conf);
        checkCredentials(settings, conf, user);
        // Explicitly: the connecting thread is pooled and may carry any caller's access context.
        Connection connection = ConnectionFactory.createConnection(conf, User.create(user));
        try {
            TableName name = TableName.valueOf(settings.table);
            byte[] family = Bytes.toBytes(settings.columnFamily);
            int saltBuckets;
            try (Admin admin = connection.getAdmin()) {
                if (!admin.tableExists(name)) {
                    create(admin, name, family, settings.saltBuckets);
                }
                saltBuckets = saltBuckets(admin.getDescriptor(name), family, settings);
            }
            return new CheckpointTable(connection, name, family, new RowKeys(saltBuckets), conf);
        } catch (IOException | RuntimeException e) {
            connection.close();
            throw e;
        }
    }

    /**
     * HBase's client refuses a put with a cell above {@code hbase.client.keyvalue.maxsize},
     * counting the cell's key and header too. Without this check the first full chunk, at the
     * first checkpoint with a large state, would fail instead of the job's start.
     */
    private static void checkChunkFitsACell(HBaseStorageSettings settings, Configuration conf)
            throws IOException {
        long maxCell = conf.getLong(MAX_CELL_SIZE_KEY, DEFAULT_MAX_CELL_SIZE);
        if (maxCell > 0 && settings.chunkSize + CELL_OVERHEAD > maxCell) {
            throw new IOException(
                    "'"
                            + HBaseCheckpointStorageOptions.CHUNK_SIZE.key()
                            + "' is "
                            + settings.chunkSize
                            + " bytes, but the HBase client refuses cells above '"
                            + MAX_CELL_SIZE_KEY
                            + "' = "
                            + maxCell
                            + " bytes, which counts up to "
                            + CELL_OVERHEAD
                            + " bytes of row key and cell header here. Set '"
                            + HBaseCheckpointStorageOptions.CHUNK_SIZE.key()
                            + "' to at most "
                            + (maxCell - CELL_OVERHEAD)
                            + " bytes, or raise '"
                            + MAX_CELL_SIZE_KEY
                            + "' (and 'hbase.server.keyvalue.maxsize' on the region servers).");
        }
    }

    /**
     * HBase's client retries a connection that fails to authenticate until the operation times
     * out, and then reports an unreachable cluster: fail at once for a user that cannot
     * authenticate to a Kerberos-secured HBase at all.
     */
    private static void checkCredentials(
            HBaseStorageSettings settings, Configuration conf, UserGroupInformation user)
            throws IOException {
        if (!User.isHBaseSecurityEnabled(conf)) {
            return;
        }
        UserGroupInformation real = user.getRealUser() != null ? user.getRealUser() : user;
        boolean hasToken =
                user.getTokens().stream()
                        .anyMatch(token -> token.getKind().equals(AuthenticationTokenIdentifier.AUTH_TOKEN_TYPE));
        if (!real.hasKerberosCredentials() && !hasToken) {
            throw new IOException(
                    settings.client
                            + " requires Kerberos ('"
                            + User.HBASE_SECURITY_CONF_KEY
                            + "' is kerberos), but the Hadoop user "
                            + user
                            + " has neither Kerberos credentials nor an HBase delegation token."
                            + " Log in with 'security.kerberos.login.keytab' and"
                            + " 'security.kerberos.login.principal', or let Flink distribute"
                            + " delegation tokens ('security.delegation.tokens.enabled', provider '"
                            + HBaseCheckpointTokenProvider.SERVICE_NAME
                            + "').");
        }
    }

    private static void create(Admin admin, TableName name, byte[] family, int saltBuckets)
            throws IOException {
        TableDescriptor descriptor =
                TableDescriptorBuilder.newBuilder(name)
                        .setValue(SALT_BUCKETS_PROPERTY, Integer.toString(saltBuckets))
                        .setColumnFamily(
                                ColumnFamilyDescriptorBuilder.newBuilder(family)
                                        .setMaxVersions(1)
                                        // Checkpoint rows are read once, on restore: keep them
                                        // out of the block cache that serves other tables.
                                        .setBlockCacheEnabled(false)
                                        .build())
                        .build();
        try {
            if (saltBuckets > 1) {
                admin.createTable(descriptor, new RowKeys(saltBuckets).splitKeys());
            } else {
                admin.createTable(descriptor);
            }
            LOG.info(
                    "Created HBase checkpoint table '{}' with {} regions (one per salt bucket)",
                    name,
                    saltBuckets);
        } catch (TableExistsException e) {
            LOG.debug("Checkpoint table '{}' was created concurrently", name);
        }
    }

    private static int saltBuckets(
            TableDescriptor descriptor, byte[] family, HBaseStorageSettings settings)
            throws IOException {
        if (!descriptor.hasColumnFamily(family)) {
            throw new IOException(
                    "HBase table '"
                            + settings.table
                            + "' exists but has no column family '"
                            + settings.columnFamily
                            + "'. Set '"
                            + HBaseCheckpointStorageOptions.COLUMN_FAMILY.key()
                            + "' to one of its families or use another table.");
        }
        String stored = descriptor.getValue(SALT_BUCKETS_PROPERTY);
        if (stored == null) {
            LOG.info(
                    "Table '{}' was not created by the checkpoint storage; using {} salt buckets from '{}'",
                    settings.table,
                    settings.saltBuckets,
                    HBaseCheckpointStorageOptions.SALT_BUCKETS.key());
            return settings.saltBuckets;
        }
        int buckets = Integer.parseInt(stored);
        if (buckets != settings.saltBuckets) {
            LOG.info(
                    "Table '{}' was created with {} salt buckets; '{}' = {} applies only to new tables",
                    settings.table,
                    buckets,
                    HBaseCheckpointStorageOptions.SALT_BUCKETS.key(),
                    settings.saltBuckets);
        }
        return buckets;
    }

    String name() {
        return tableName.getNameAsString();
    }

    boolean isClosed() {
        return connection.isClosed();
    }

    private String uriOf(String streamKey) {
        return HBaseCheckpointPointer.uri(name(), streamKey);
    }

    BufferedMutator newMutator(long writeBufferSize) throws IOException {
        return connection.getBufferedMutator(
                new BufferedMutatorParams(tableName).writeBufferSize(writeBufferSize));
    }

    Put chunkPut(String streamKey, long offset, byte[] chunk, Durability durability) {
        Put put = new Put(keys.chunkRow(streamKey, offset));
        put.addColumn(family, DATA_QUALIFIER, chunk);
        put.setDurability(durability);
        return put;
    }

    /** The row that records a stream's length, written after (or with) its last chunk. */
    Put lengthPut(String streamKey, long length, Durability durability) {
        Put put = new Put(keys.lengthRow(streamKey));
        put.addColumn(family, DATA_QUALIFIER, Bytes.toBytes(length));
        put.setDurability(durability);
        return put;
    }

    /**
     * Marks a fully written (and flushed) metadata stream as complete by storing its length,
     * unless a length is stored already. Returns whether this call stored it.
     */
    boolean commitLengthIfAbsent(String streamKey, long length, Durability durability)
            throws IOException {
        Put put = lengthPut(streamKey, length, durability);
        try (Table table = connection.getTable(tableName)) {
            long start = System.nanoTime();
            // A region server that answers "moved" has not applied it: asking again is safe.
            boolean stored =
                    regionMoves.run(
                            Bytes.toStringBinary(put.getRow()),
                            () ->
                                    table.checkAndMutate(
                                                    CheckAndMutate.newBuilder(put.getRow())
                                                            .ifNotExists(family, DATA_QUALIFIER)
                                                            .build(put))
                                            .isSuccess());
            metrics.written(stored ? 1 : 0, stored ? Long.BYTES : 0, System.nanoTime() - start);
            return stored;
        } catch (IOException e) {
            metrics.failed(1);
            throw e;
        }
    }

    /** The recorded length of a stream, or null if none was (a metadata stream never committed). */
    @Nullable
    Long committedLength(String streamKey) throws IOException {
        byte[] row = keys.lengthRow(streamKey);
        try (Table table = connection.getTable(tableName)) {
            Result result =
                    regionMoves.run(
                            Bytes.toStringBinary(row),
                            () -> table.get(new Get(row).addColumn(family, DATA_QUALIFIER)));
            byte[] value = result.getValue(family, DATA_QUALIFIER);
            return value == null ? null : Bytes.toLong(value);
        }
    }

    /**
     * The chunk that holds byte {@code position} of the stream, or null if the stream has no byte
     * there. A sequential reader asks for the exact start of the next chunk, which is one get; any
     * other position costs one reverse scan.
     */
    @Nullable
    Chunk chunkAt(String streamKey, long position) throws IOException {
        byte[] exact = keys.chunkRow(streamKey, position);
        try (Table table = connection.getTable(tableName)) {
            Result result =
                    regionMoves.run(
                            Bytes.toStringBinary(exact), () -> table.get(new Get(exact).addColumn(family, DATA_QUALIFIER)));
            if (result.isEmpty()) {
                result = lastChunkAtOrBelow(table, streamKey, exact, true);
            }
            if (result == null || result.isEmpty()) {
                return null;
            }
            Chunk chunk = new Chunk(RowKeys.offsetOf(result.getRow()), result.getValue(family, DATA_QUALIFIER));
            return chunk.contains(position) ? chunk : null;
        }
    }

    /**
     * The key, as text, of the chunk row that should hold byte {@code position} of the stream: the
     * one starting where the chunks below the position end. For errors about a missing chunk.
     */
    String missingChunkRow(String streamKey, long position) throws IOException {
        long start = 0;
        try (Table table = connection.getTable(tableName)) {
            Result below = lastChunkAtOrBelow(table, streamKey, keys.chunkRow(streamKey, position), true);
            if (below != null) {
                start = RowKeys.offsetOf(below.getRow()) + below.getValue(family, DATA_QUALIFIER).length;
            }
        }
        return Bytes.toString(keys.chunkRow(streamKey, start));
    }

    /** The stream's length as stored (end of its last chunk). */
    long length(String streamKey) throws IOException {
        try (Table table = connection.getTable(tableName)) {
            Result last = lastChunkAtOrBelow(table, streamKey, keys.afterLastChunk(streamKey), false);
            if (last == null) {
                throw new FileNotFoundException(
                        "No rows of stream " + uriOf(streamKey) + " in HBase table " + name());
            }
            return RowKeys.offsetOf(last.getRow())
                    + last.getValue(family, DATA_QUALIFIER).length;
        }
    }

    @Nullable
    private Result lastChunkAtOrBelow(Table table, String streamKey, byte[] start, boolean inclusive)
            throws IOException {
        return regionMoves.run(
                Bytes.toStringBinary(start), () -> lastChunkAtOrBelowOnce(table, streamKey, start, inclusive));
    }

    @Nullable
    private Result lastChunkAtOrBelowOnce(Table table, String streamKey, byte[] start, boolean inclusive)
            throws IOException {
        Scan scan =
                new Scan()
                        .withStartRow(start, inclusive)
                        .withStopRow(keys.streamPrefix(streamKey), false)
                        .setReversed(true)
                        .addColumn(family, DATA_QUALIFIER)
                        .setLimit(1)
                        .setCaching(1);
        try (ResultScanner scanner = table.getScanner(scan)) {
            return scanner.next();
        }
    }

    /** Deletes every row of one stream; returns how many. */
    int deleteStream(String streamKey) throws IOException {
        byte[] prefix = keys.streamPrefix(streamKey);
        return deleteRows(() -> new Scan().setStartStopRowForPrefixScan(prefix));
    }

    /** Deletes every row under a directory key (e.g. one checkpoint) in all salt buckets. */
    int deleteDirectory(String directoryKey) throws IOException {
        return deleteDirectories(List.of(directoryKey));
    }

    /** Deletes every row under any of the directory keys, in all salt buckets, in one scan. */
    int deleteDirectories(Collection<String> directoryKeys) throws IOException {
        List<byte[]> prefixes = new ArrayList<>();
        for (String directoryKey : directoryKeys) {
            prefixes.addAll(keys.directoryPrefixes(directoryKey));
        }
        // The scan runs from the first range to the last; the filter seeks between them.
        prefixes.sort(Bytes.BYTES_COMPARATOR);
        List<MultiRowRangeFilter.RowRange> ranges = new ArrayList<>();
        for (byte[] prefix : prefixes) {
            ranges.add(new MultiRowRangeFilter.RowRange(prefix, true, prefixEnd(prefix), false));
        }
        return deleteRows(
                () ->
                        new Scan()
                                .withStartRow(ranges.get(0).getStartRow())
                                .withStopRow(ranges.get(ranges.size() - 1).getStopRow())
                                .setFilter(new MultiRowRangeFilter(ranges)));
    }

    /**
     * Deletes the rows that a scan from {@code scans} finds; returns how many.
     *
     * <p>A delete must finish on a thread that is being interrupted: Flink discards what a
     * cancelled checkpoint wrote from the very threads that the cancellation interrupts (RocksDB's
     * uploader does), and interrupts them again while the task winds down; the HBase client gives
     * up at once on an interrupted thread, which would leave the rows behind for good. So the
     * delete runs with the interrupt flag cleared, starts over (it is idempotent) when an
     * interrupt arrives during it, and sets the flag again when it is done.
     */
    private int deleteRows(Supplier<Scan> scans) throws IOException {
        boolean interrupted = false;
        try {
            for (int attempt = 1; ; attempt++) {
                interrupted |= Thread.interrupted();
                try {
                    return regionMoves.run(
                            Bytes.toStringBinary(scans.get().getStartRow()), () -> deleteRowsOnce(scans.get()));
                } catch (IOException | UncheckedIOException e) {
                    if (!isInterruption(e) || attempt == MAX_INTERRUPTED_DELETES) {
                        throw e instanceof UncheckedIOException
                                ? ((UncheckedIOException) e).getCause()
                                : (IOException) e;
                    }
                    // The client may have cleared the flag when it gave up; the caller gets it back.
                    interrupted = true;
                    LOG.debug("Delete in table {} was interrupted; deleting again", name(), e);
                }
            }
        } finally {
            if (interrupted || Thread.interrupted()) {
                Thread.currentThread().interrupt();
            }
        }
    }

    /**
     * Whether {@code e} comes from an interrupt. A timeout is not one, though Java's socket
     * timeout is an {@link InterruptedIOException}: deleting again would only wait again.
     */
    static boolean isInterruption(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof SocketTimeoutException) {
                return false;
            }
            if (t instanceof InterruptedIOException
                    || t instanceof InterruptedException
                    || t instanceof ClosedByInterruptException) {
                return true;
            }
        }
        return false;
    }

    private int deleteRowsOnce(Scan scan) throws IOException {
        scan.setFilter(
                        scan.getFilter() == null
                                ? keysOnly()
                                : new FilterList(scan.getFilter(), keysOnly()))
                .setCaching(DELETE_BATCH);
        int deleted = 0;
        try (Table table = connection.getTable(tableName);
                ResultScanner scanner = table.getScanner(scan)) {
            List<Delete> batch = new ArrayList<>(DELETE_BATCH);
            for (Result row : scanner) {
                batch.add(new Delete(row.getRow()));
                if (batch.size() == DELETE_BATCH) {
                    deleted += deleteBatch(table, batch);
                }
            }
            deleted += deleteBatch(table, batch);
        }
        return deleted;
    }

    private int deleteBatch(Table table, List<Delete> batch) throws IOException {
        int size = batch.size();
        if (size > 0) {
            table.delete(batch);
            batch.clear();
            metrics.deleted(size);
        }
        return size;
    }

    private static FilterList keysOnly() {
        return new FilterList(new FirstKeyOnlyFilter(), new KeyOnlyFilter());
    }

    private static byte[] prefixEnd(byte[] prefix) {
        byte[] end = prefix.clone();
        // Prefixes are ASCII and end with '/', so incrementing the last byte never overflows.
        end[end.length - 1]++;
        return end;
    }

    @Override
    public void close() throws IOException {
        connection.close();
    }

    /** A stored chunk of a stream: its start offset and bytes. */
    static final class Chunk {
        final long offset;
        final byte[] bytes;

        Chunk(long offset, byte[] bytes) {
            this.offset = offset;
            this.bytes = bytes;
        }

        boolean contains(long position) {
            return position >= offset && position < offset + bytes.length;
        }
    }
}
