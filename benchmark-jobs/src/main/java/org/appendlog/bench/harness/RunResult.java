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

import java.util.Collections;
import java.util.List;
import java.util.Map;

/** The measurements of one configuration (job x backend x storage), -1 where not measured. */
public final class RunResult {

    /** The backend column of the rows that run the job with checkpointing off. */
    public static final String CHECKPOINTING_OFF = "off (no checkpoints)";

    public final String job;
    public final String backend;
    public final String storage;
    /** Which pass over the matrix this run belongs to (1 to {@code --rounds}); 0 for a warm-up. */
    public final int round;

    /** "ok", or why the configuration did not run or did not finish. */
    public String status = "ok";

    public boolean verified;
    public String verification = "";
    public long recordsProcessed = -1;
    public double throughput = -1;
    /**
     * CPU time of the whole JVM (the job's threads, Flink's, the backend's, garbage collection, and
     * the in-JVM HDFS or HBase mini cluster) per record processed, in microseconds, over the same
     * window as {@link #throughput}. It leaves out the time the run waited for a core, not the time
     * it waited for memory, so on a shared machine it moves with the rate too.
     */
    public double cpuMicrosPerRecord = -1;
    /** The part of {@link #cpuMicrosPerRecord} that the thread of the counting task spent. */
    public double taskCpuMicrosPerRecord = -1;
    public CheckpointFigures checkpoints = CheckpointFigures.none();
    public long storageBytesWritten = -1;
    public long storageBytesInUse = -1;
    public long heapBytes = -1;
    /** {@link #heapBytes} by component ({@link HeapBreakdown}); empty if not measured. */
    public Map<String, Long> heapBreakdown = Collections.emptyMap();
    public long recoveryFirstRecordMs = -1;
    public long recoveryFullThroughputMs = -1;
    /**
     * The injected failure's recovery as sampled: (ms since the failure, records processed since
     * it), from the failure until the run settled; empty without a failure.
     */
    public List<long[]> recoveryCurve = Collections.emptyList();

    public RunResult(String job, String backend, String storage, int round) {
        this.job = job;
        this.backend = backend;
        this.storage = storage;
        this.round = round;
    }

    /** The configuration, the same in every round. */
    public String label() {
        return job + " / " + backend + " / " + storage;
    }

    public boolean ran() {
        return "ok".equals(status);
    }
}
