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

import org.apache.hadoop.security.UserGroupInformation;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.stream.Collectors;

/**
 * The checkpoint tables this process has opened, one HBase connection each, shared by all jobs
 * and by the {@code hbase://} file system that reads and deletes restored state handles.
 *
 * <p>Flink's checkpoint storage API has no close, so the connections live as long as the process
 * (closed by a shutdown hook). Opening is bounded by the client timeout: HBase's own client
 * would wait on an unreachable ZooKeeper for minutes.
 *
 * <p>A connection authenticates as the Hadoop user current where it is first asked for: the user
 * that Flink's security module logged in (keytab, ticket cache, or delegation tokens only), in
 * every thread of a Flink process. It is one connection per user, so a caller in another user's
 * {@code doAs} never borrows this one's rights. The connection keeps that user, not a copy of its
 * credentials: a keytab relogin and tokens that Flink adds later serve its next RPC connections.
 */
final class CheckpointTables {

    private static final Logger LOG = LoggerFactory.getLogger(CheckpointTables.class);

    private static final Map<List<Object>, CompletableFuture<CheckpointTable>> OPEN =
            new ConcurrentHashMap<>();

    /** Table name to the settings that last named it: what an {@code hbase://<table>/} path means. */
    private static final Map<String, HBaseStorageSettings> BY_NAME = new ConcurrentHashMap<>();

    private static final ExecutorService CONNECTOR =
            Executors.newCachedThreadPool(
                    runnable -> {
                        Thread thread = new Thread(runnable, "hbase-checkpoint-connect");
                        thread.setDaemon(true);
                        return thread;
                    });

    static {
        Runtime.getRuntime()
                .addShutdownHook(new Thread(CheckpointTables::closeAll, "hbase-checkpoint-close"));
    }

    private CheckpointTables() {}

    /** Makes {@code hbase://<table>/} paths of these settings readable in this process. Cheap. */
    static void register(HBaseStorageSettings settings) {
        HBaseStorageSettings previous = BY_NAME.put(settings.table, settings);
        warnIfOther(settings, previous);
    }

    /**
     * Makes {@code hbase://<table>/} paths of these settings readable in this process unless the
     * table name is registered already: by the configuration or a running job's storage, which
     * name the cluster as it is now, where {@code settings} (e.g. of a checkpoint read back from
     * the high-availability store) name it as it was.
     */
    static void registerIfAbsent(HBaseStorageSettings settings) {
        HBaseStorageSettings present = BY_NAME.putIfAbsent(settings.table, settings);
        if (present != null) {
            warnIfOther(present, settings);
        }
    }

    /** Warns if the table's paths resolve through {@code used}'s cluster and not {@code other}'s. */
    private static void warnIfOther(HBaseStorageSettings used, @Nullable HBaseStorageSettings other) {
        if (other != null && !other.client.equals(used.client)) {
            LOG.warn(
                    "hbase:// paths of checkpoint table '{}' resolve through {} in this process, not"
                            + " through {}",
                    used.table,
                    used.client,
                    other.client);
        }
    }

    /** The open table for these settings: connects and creates the table on first use. */
    static CheckpointTable open(HBaseStorageSettings settings) throws IOException {
        register(settings);
        UserGroupInformation user = UserGroupInformation.getCurrentUser();
        List<Object> key =
                Arrays.asList(settings.client, settings.table, settings.columnFamily, user);
        CompletableFuture<CheckpointTable> future =
                OPEN.computeIfAbsent(key, k -> connectAsync(settings, user));
        try {
            CheckpointTable table =
                    future.get(settings.client.timeout().toMillis(), TimeUnit.MILLISECONDS);
            if (table.isClosed()) {
                OPEN.remove(key, future);
                return open(settings);
            }
            return table;
        } catch (TimeoutException e) {
            forget(key, future);
            throw new IOException(
                    "Could not reach HBase at ZooKeeper quorum '"
                            + settings.client.effectiveQuorum()
                            + "' to open checkpoint table '"
                            + settings.table
                            + "' as "
                            + user
                            + " within "
                            + settings.client.timeout().toMillis()
                            + " ms. Check that HBase is running and '"
                            + HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM.key()
                            + "' is right; the wait is bounded by '"
                            + HBaseCheckpointStorageOptions.CLIENT_TIMEOUT.key()
                            + "'.");
        } catch (ExecutionException e) {
            forget(key, future);
            throw new IOException(
                    "Could not open checkpoint table '"
                            + settings.table
                            + "' on HBase at ZooKeeper quorum '"
                            + settings.client.effectiveQuorum()
                            + "' as "
                            + user
                            + ": "
                            + withoutStackTrace(e.getCause().getMessage()),
                    e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("Interrupted while opening checkpoint table " + settings.table, e);
        }
    }

    /**
     * A server's exception arrives with the server's stack trace in its message: without those
     * lines (they stay in the cause), on one line.
     */
    private static String withoutStackTrace(@Nullable String message) {
        return message == null
                ? ""
                : message.lines()
                        .map(String::trim)
                        .filter(line -> !line.isEmpty() && !line.startsWith("at "))
                        .collect(Collectors.joining(" "));
    }

    /** The table behind an {@code hbase://<table>/} path, as registered by a storage in this process. */
    static CheckpointTable byName(String table) throws IOException {
        HBaseStorageSettings settings = BY_NAME.get(table);
        if (settings == null) {
            throw new IOException(
                    "No HBase checkpoint storage for table '"
                            + table
                            + "' is configured in this process, so hbase://"
                            + table
                            + "/ paths cannot be read. Configure 'execution.checkpointing.storage: "
                            + HBaseCheckpointStorageFactory.class.getName()
                            + "' with '"
                            + HBaseCheckpointStorageOptions.TABLE.key()
                            + ": "
                            + table
                            + "'.");
        }
        return open(settings);
    }

    private static CompletableFuture<CheckpointTable> connectAsync(
            HBaseStorageSettings settings, UserGroupInformation user) {
        return CompletableFuture.supplyAsync(
                () -> {
                    try {
                        CheckpointTable table = CheckpointTable.connect(settings, user);
                        LOG.info("Connected to HBase checkpoint {} as {}", settings, user);
                        return table;
                    } catch (IOException e) {
                        throw new java.util.concurrent.CompletionException(e);
                    }
                },
                CONNECTOR);
    }

    /** Drops a failed or abandoned attempt so the next call tries again; closes it if it ever connects. */
    private static void forget(List<Object> key, CompletableFuture<CheckpointTable> future) {
        OPEN.remove(key, future);
        future.thenAccept(CheckpointTables::closeQuietly);
    }

    private static void closeAll() {
        OPEN.values().forEach(future -> future.thenAccept(CheckpointTables::closeQuietly));
    }

    private static void closeQuietly(CheckpointTable table) {
        try {
            table.close();
        } catch (IOException e) {
            LOG.debug("Could not close connection of checkpoint table {}", table.name(), e);
        }
    }
}
