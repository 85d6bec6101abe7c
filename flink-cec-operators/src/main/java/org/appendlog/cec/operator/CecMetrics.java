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

package org.appendlog.cec.operator;

/**
 * The names of the metrics the CEC window operator registers in its operator metric group. The
 * operator, the benchmark and the tests read them from here; the README's table is checked
 * against them. Cumulative figures are counters.
 */
public final class CecMetrics {

    /** Records dropped for arriving after their windows' allowed lateness (Flink's name). */
    public static final String LATE_RECORDS_DROPPED = "numLateRecordsDropped";

    /** OPEN tuples written. */
    public static final String OPEN_TUPLES = "cecOpenTuples";

    /** CHECK tuples written. */
    public static final String CHECK_TUPLES = "cecCheckTuples";

    /** CHECK tuples written at checkpoint barriers. */
    public static final String BARRIER_CHECK_TUPLES = "cecBarrierCheckTuples";

    /**
     * Histogram of the task thread's time in the operator at each checkpoint, in microseconds:
     * before the barrier (CHECKs and sync in barrier mode) plus the synchronous part of the snapshot.
     */
    public static final String BARRIER_MICROS = "cecBarrierMicros";

    /** INPUT records written (eventual and open-only mode log every element that has a window). */
    public static final String INPUT_TUPLES = "cecInputTuples";

    /** RESULT tuples written. */
    public static final String RESULT_TUPLES = "cecResultTuples";

    /** Windows open now. */
    public static final String OPEN_WINDOWS = "cecOpenWindows";

    /** Bytes this subtask wrote to its persisted stream, since it started or was restored. */
    public static final String BYTES_PERSISTED = "cecBytesPersisted";

    /** Duration of this subtask's last restore, in milliseconds. */
    public static final String RECOVERY_MILLIS = "cecRecoveryMillis";

    /** Records this subtask's last restore scanned. */
    public static final String RECOVERY_RECORDS_SCANNED = "cecRecoveryRecordsScanned";

    /** INPUT records this subtask's last restore replayed into its windows. */
    public static final String REPLAY_RECORDS = "cecReplayRecords";

    private CecMetrics() {}
}
