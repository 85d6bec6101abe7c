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

/**
 * What the checkpoint storage wrote to and deleted from one HBase table in this process, as JMX
 * attributes of {@code org.appendlog.hbase:type=CheckpointStorage,table=<table>}. Flink gives a
 * checkpoint storage no metric group, so these are read through JMX (Flink's JMX reporter sits
 * beside them; a Prometheus JMX exporter reads both). Counts are cumulative since the process
 * started.
 */
public interface CheckpointTableMetricsMXBean {

    /** Bytes of the values HBase acknowledged: stream bytes, and 8 per stream length. */
    long getBytesWritten();

    /** Rows HBase acknowledged: chunks, stream lengths and metadata commits. */
    long getRowsWritten();

    /** Rows whose write failed (the checkpoint that wrote them fails). */
    long getFailedPuts();

    /** Rows deleted when checkpoints were discarded or streams abandoned. */
    long getRowsDeleted();

    /** Flushes of buffered puts and metadata commits that HBase acknowledged. */
    long getPutFlushes();

    /** Mean time HBase took to acknowledge a flush or commit, in milliseconds. */
    double getPutLatencyMillisMean();

    /** Longest time HBase took to acknowledge a flush or commit, in milliseconds. */
    long getPutLatencyMillisMax();
}
