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
import org.apache.hadoop.hbase.HConstants;
import org.apache.hadoop.hbase.client.Connection;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.io.UncheckedIOException;
import java.util.concurrent.TimeUnit;

/**
 * Runs an idempotent operation on a checkpoint table again when a region server answered that the
 * region moved and the client could not tell.
 *
 * <p>The {@code -flink-lib} jar relocates HBase's {@code RegionMovedException}: kept under HBase's name,
 * it would be one class for this jar's client and for that of another HBase jar in Flink's {@code lib/}
 * (Flink's HBase SQL connector keeps it too), though each names the region's new server with its own
 * relocated {@code ServerName}. The client creates a returned exception from its class name, so a region
 * server's "moved" answer reaches it as the other jar's copy (a {@code NotServingRegionException}, which
 * the client handles itself), or, without such a jar, as an exception it cannot load: a {@code
 * DoNotRetryIOException} ("Unable to load exception received from server") that fails the operation with
 * the region's old location still cached. This clears the connection's cached locations, waits as the
 * client would between its retries, and runs the operation again, within the client's own retry count
 * ({@code hbase.client.retries.number}) and operation timeout ({@code hbase.client.operation.timeout}).
 *
 * <p>Puts through a {@code BufferedMutator} need none of this: the client reads the answers to a batch
 * ({@code multi}) request differently, takes one it cannot load for a failure of the whole request,
 * forgets the region's location and sends the batch again by itself.
 */
final class RegionMoveRetry {

    private static final Logger LOG = LoggerFactory.getLogger(RegionMoveRetry.class);

    /** The simple name of the exception; its package name would be relocated in the jar. */
    private static final String MOVED = "RegionMovedException";

    /** An operation that may run more than once. */
    interface Operation<T> {
        T run() throws IOException;
    }

    private final Connection connection;
    private final String table;
    private final int retries;
    private final long timeoutNanos;
    private final long pauseMillis;

    RegionMoveRetry(Connection connection, String table, Configuration conf) {
        this.connection = connection;
        this.table = table;
        this.retries = conf.getInt(HConstants.HBASE_CLIENT_RETRIES_NUMBER, HConstants.DEFAULT_HBASE_CLIENT_RETRIES_NUMBER);
        this.timeoutNanos =
                TimeUnit.MILLISECONDS.toNanos(
                        conf.getLong(HConstants.HBASE_CLIENT_OPERATION_TIMEOUT, HConstants.DEFAULT_HBASE_CLIENT_OPERATION_TIMEOUT));
        this.pauseMillis = conf.getLong(HConstants.HBASE_CLIENT_PAUSE, HConstants.DEFAULT_HBASE_CLIENT_PAUSE);
    }

    /**
     * Runs {@code operation}, again as long as it fails on a moved region that the client did not
     * recognise. {@code row} names what it reads or writes, for the log.
     */
    <T> T run(String row, Operation<T> operation) throws IOException {
        long deadline = System.nanoTime() + timeoutNanos;
        for (int attempt = 1; ; attempt++) {
            try {
                return operation.run();
            } catch (IOException | UncheckedIOException e) {
                if (!isUnrecognisedMove(e) || attempt > retries || System.nanoTime() - deadline > 0) {
                    throw e;
                }
                LOG.warn(
                        "HBase table '{}', row '{}': the region moved and the client could not load the"
                                + " region server's answer; looking the region up again (attempt {} of {}): {}",
                        table,
                        row,
                        attempt + 1,
                        retries + 1,
                        firstLine(e));
                connection.clearRegionLocationCache();
                pause(attempt);
            }
        }
    }

    /** As the client backs off between its own retries ({@code ConnectionUtils#getPauseTime}). */
    private void pause(int attempt) throws InterruptedIOException {
        long millis = pauseMillis * HConstants.RETRY_BACKOFF[Math.min(attempt - 1, HConstants.RETRY_BACKOFF.length - 1)];
        try {
            Thread.sleep(millis);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            InterruptedIOException interrupted =
                    new InterruptedIOException("Interrupted while waiting to retry on HBase table '" + table + "'");
            interrupted.initCause(e);
            throw interrupted;
        }
    }

    /**
     * Whether {@code e} comes from a region server's {@code RegionMovedException} that reached the client
     * by its name only, in the message of the exception or of one of its causes.
     */
    private static boolean isUnrecognisedMove(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (String.valueOf(t.getMessage()).contains(MOVED)) {
                return true;
            }
        }
        return false;
    }

    private static String firstLine(Throwable e) {
        String text = e.toString();
        int end = text.indexOf('\n');
        return end < 0 ? text : text.substring(0, end);
    }
}
