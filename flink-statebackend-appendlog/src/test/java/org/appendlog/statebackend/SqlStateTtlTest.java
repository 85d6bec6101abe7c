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

package org.appendlog.statebackend;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.api.config.ExecutionConfigOptions;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.appendlog.statebackend.MaterializingSink.add;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.RESTORE_BYTES_READ;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink SQL's state TTL ({@code table.exec.state.ttl}, processing time) expires the state of a
 * GROUP BY on the append-log backend as on {@code hashmap}, the control, also when the expired
 * state was restored after a failure.
 *
 * <p>The input comes in two phases: {@link #PHASE_1} records over keys 0..7, then a pause of
 * {@link #PAUSE}, well over the {@link #TTL}, then the rest over keys 2..9. Within a phase every
 * key is written every few milliseconds, far below the TTL, so nothing expires there; across the
 * pause every key expires. The source pauses without blocking its task, so checkpoints go on
 * during the pause: the first one then covers exactly phase 1, and arms {@link FailOnce}, which
 * fails the job at the first record after the pause. The job restores from that checkpoint, whose
 * state carries the phase-1 write times, and each key's first phase-2 record must find it expired.
 *
 * <p>On expired accumulators Flink's {@code GroupAggFunction} (1.20) starts a new accumulator and
 * emits the new row as an INSERT, without retracting the old row, which it no longer has. So the
 * {@link MaterializingSink}'s final table of {@code SELECT k, COUNT(*), SUM(v) ... GROUP BY k}
 * holds, per key, its phase-1 row and its phase-2 row, each counting only its own phase. The same
 * query with a {@code STATE_TTL} hint of an hour, in the same job, must instead count across the
 * pause and the restore: it shows that the state was restored at all, and the first query that it
 * expired.
 */
class SqlStateTtlTest {

    private static final Duration TTL = Duration.ofSeconds(2);
    private static final Duration PAUSE = Duration.ofSeconds(5);
    private static final int PARALLELISM = 2;
    private static final long PHASE_1 = 3_000;
    private static final long RECORDS = 5_000;
    private static final double RECORDS_PER_SECOND = 2_000;
    private static final int KEYS_PER_PHASE = 8;
    /** Phase 2's keys are 2..9: keys 0 and 1 are only in phase 1, 8 and 9 only in phase 2. */
    private static final int PHASE_2_FIRST_KEY = 2;

    private static final String EXPIRING = "group-by-ttl-2s";
    private static final String KEPT = "group-by-ttl-1h";

    @TempDir static Path tmp;

    /** Keeps the metrics of tasks that ended: those of the failed attempt and of the restore. */
    private static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            MiniClusterJobs.cluster(() -> METRICS.addToConfiguration(new Configuration()));

    @ParameterizedTest(name = "{0}")
    @ValueSource(strings = {"appendlog", "hashmap"})
    void stateExpiredBeforeAFailureIsExpiredAfterTheRestore(
            String backend, @InjectClusterClient ClusterClient<?> client) throws Exception {
        FailOnce.reset();
        MaterializingSink.reset();
        PausingInput.reset();
        Path logDir = tmp.resolve(backend + "-log");
        Configuration config =
                CountingJob.withRestarts(
                        CountingJob.withBackend(
                                CountingJob.jobConfig(
                                        tmp.resolve(backend + "-checkpoints").toUri().toString()),
                                backend,
                                logDir.toUri().toString()));
        JobID jobId = MiniClusterJobs.submit(client, jobGraph(config));
        MiniClusterJobs.awaitSuccess(client, jobId);

        assertThat(PausingInput.paused()).as("the input paused after phase 1").isTrue();
        assertThat(FailOnce.failedAtRecord())
                .as(
                        "the record the job failed at: the first after the pause, so the job"
                                + " restored from a checkpoint of all of phase 1 and none of"
                                + " phase 2 (one completed during the pause)")
                .isEqualTo(PHASE_1 + 1);
        assertThat(MaterializingSink.finishedAttempts())
                .as("attempt that finished, per query: one failure, one restart")
                .containsOnlyKeys(EXPIRING, KEPT)
                .allSatisfy((query, attempt) -> assertThat(attempt).isEqualTo(1));
        assertThat(MaterializingSink.restoredViews())
                .as("queries whose sink restored a non-empty view from the checkpoint")
                .containsExactlyInAnyOrder(EXPIRING, KEPT);
        if (backend.equals("appendlog")) {
            assertThat(logDir.resolve(jobId.toHexString()))
                    .as("the append-log backend's log of the job")
                    .isDirectory();
            assertThat(MiniClusterJobs.appendLogMetric(METRICS, jobId, RESTORE_BYTES_READ, 1))
                    .as("log bytes the restarted backends read (appendlog.restoreBytesRead)")
                    .isPositive();
        }

        Map<String, Map<String, Long>> actual = new TreeMap<>();
        actual.put(EXPIRING, MaterializingSink.finalView(EXPIRING));
        actual.put(KEPT, MaterializingSink.finalView(KEPT));
        MaterializingSink.assertFinalTables(
                expectedTables(),
                actual,
                String.format(
                        "on %s (TTL %s: one row of a key over both phases means that its"
                                + " state did not expire; a phase's row split in two, that the"
                                + " key went unwritten for the TTL within the phase, a stall of"
                                + " the test machine)",
                        backend, TTL));
    }

    private static JobGraph jobGraph(Configuration config) {
        StreamExecutionEnvironment env = new StreamExecutionEnvironment(config);
        env.setParallelism(PARALLELISM);
        env.setMaxParallelism(CountingJob.MAX_PARALLELISM);
        StreamTableEnvironment tableEnv = StreamTableEnvironment.create(env);
        tableEnv.getConfig().set(ExecutionConfigOptions.IDLE_STATE_RETENTION, TTL);

        DataStream<Row> input =
                env.fromSource(
                                PausingInput.source(
                                        RECORDS, RECORDS_PER_SECOND, PHASE_1, PAUSE),
                                WatermarkStrategy.noWatermarks(),
                                "input")
                        .setParallelism(1)
                        .uid("input")
                        .map(new FailOnce(PHASE_1, 1))
                        .setParallelism(1)
                        .uid("fail-once")
                        .name("fail-once")
                        .map(SqlStateTtlTest::inputRow)
                        .returns(INPUT_TYPE)
                        .setParallelism(1)
                        .uid("input-rows");
        tableEnv.createTemporaryView("input", tableEnv.fromDataStream(input));
        MaterializingSink.materialize(
                tableEnv,
                EXPIRING,
                tableEnv.sqlQuery("SELECT k, COUNT(*) AS c, SUM(v) AS s FROM input GROUP BY k"));
        MaterializingSink.materialize(
                tableEnv,
                KEPT,
                tableEnv.sqlQuery(
                        "SELECT /*+ STATE_TTL('input' = '1h') */ k, COUNT(*) AS c, SUM(v) AS s"
                                + " FROM input GROUP BY k"));
        return env.getStreamGraph().getJobGraph();
    }

    private static final TypeInformation<Row> INPUT_TYPE =
            Types.ROW_NAMED(new String[] {"id", "k", "v"}, Types.LONG, Types.INT, Types.LONG);

    private static int key(long n) {
        return n < PHASE_1
                ? (int) (n % KEYS_PER_PHASE)
                : PHASE_2_FIRST_KEY + (int) ((n - PHASE_1) % KEYS_PER_PHASE);
    }

    private static long value(long n) {
        return n % 97;
    }

    private static Row inputRow(long n) {
        return Row.of(n, key(n), value(n));
    }

    /**
     * Per query, the multiset of rows of its final table: with the TTL, each key's row of each
     * phase it occurs in, counting that phase only; with the hour, each key's row over both.
     */
    private static Map<String, Map<String, Long>> expectedTables() {
        Map<Integer, long[]> phase1 = new TreeMap<>(); // count, sum
        Map<Integer, long[]> phase2 = new TreeMap<>();
        Map<Integer, long[]> both = new TreeMap<>();
        for (long n = 0; n < RECORDS; n++) {
            for (Map<Integer, long[]> aggregate : List.of(n < PHASE_1 ? phase1 : phase2, both)) {
                long[] row = aggregate.computeIfAbsent(key(n), k -> new long[2]);
                row[0]++;
                row[1] += value(n);
            }
        }
        Map<String, Long> expiring = new HashMap<>();
        phase1.forEach((k, row) -> add(expiring, k, row[0], row[1]));
        phase2.forEach((k, row) -> add(expiring, k, row[0], row[1]));
        Map<String, Long> kept = new HashMap<>();
        both.forEach((k, row) -> add(kept, k, row[0], row[1]));
        Map<String, Map<String, Long>> tables = new TreeMap<>();
        tables.put(EXPIRING, expiring);
        tables.put(KEPT, kept);
        return tables;
    }
}
