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

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.management.JMException;
import javax.management.ObjectName;

import java.lang.management.ManagementFactory;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.LongAccumulator;
import java.util.concurrent.atomic.LongAdder;

/** The counts of {@link CheckpointTableMetricsMXBean} for one table, shared by its writers. */
final class CheckpointTableMetrics implements CheckpointTableMetricsMXBean {

    private static final Logger LOG = LoggerFactory.getLogger(CheckpointTableMetrics.class);

    private static final Map<String, CheckpointTableMetrics> BY_TABLE = new ConcurrentHashMap<>();

    private final LongAdder bytesWritten = new LongAdder();
    private final LongAdder rowsWritten = new LongAdder();
    private final LongAdder failedPuts = new LongAdder();
    private final LongAdder rowsDeleted = new LongAdder();
    private final LongAdder flushes = new LongAdder();
    private final LongAdder flushNanos = new LongAdder();
    private final LongAccumulator maxFlushNanos = new LongAccumulator(Math::max, 0);

    private CheckpointTableMetrics() {}

    /** The metrics of {@code table}, registered with the platform MBean server on first use. */
    static CheckpointTableMetrics of(String table) {
        return BY_TABLE.computeIfAbsent(table, CheckpointTableMetrics::register);
    }

    static ObjectName name(String table) throws JMException {
        return new ObjectName("org.appendlog.hbase:type=CheckpointStorage,table=" + table);
    }

    private static CheckpointTableMetrics register(String table) {
        CheckpointTableMetrics metrics = new CheckpointTableMetrics();
        try {
            ManagementFactory.getPlatformMBeanServer().registerMBean(metrics, name(table));
        } catch (JMException e) {
            // Counting goes on; only JMX readers miss it.
            LOG.warn("Could not register the JMX metrics of checkpoint table {}", table, e);
        }
        return metrics;
    }

    /** HBase acknowledged {@code rows} rows of {@code bytes} cell bytes after {@code nanos}. */
    void written(int rows, long bytes, long nanos) {
        rowsWritten.add(rows);
        bytesWritten.add(bytes);
        flushes.increment();
        flushNanos.add(nanos);
        maxFlushNanos.accumulate(nanos);
    }

    void failed(int rows) {
        failedPuts.add(rows);
    }

    void deleted(int rows) {
        rowsDeleted.add(rows);
    }

    @Override
    public long getBytesWritten() {
        return bytesWritten.sum();
    }

    @Override
    public long getRowsWritten() {
        return rowsWritten.sum();
    }

    @Override
    public long getFailedPuts() {
        return failedPuts.sum();
    }

    @Override
    public long getRowsDeleted() {
        return rowsDeleted.sum();
    }

    @Override
    public long getPutFlushes() {
        return flushes.sum();
    }

    @Override
    public double getPutLatencyMillisMean() {
        long n = flushes.sum();
        return n == 0 ? 0 : flushNanos.sum() / 1e6 / n;
    }

    @Override
    public long getPutLatencyMillisMax() {
        return maxFlushNanos.get() / 1_000_000;
    }
}
