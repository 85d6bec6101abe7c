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
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.OperatorIDPair;
import org.apache.flink.runtime.jobgraph.JobGraph;
import org.apache.flink.runtime.jobgraph.JobVertex;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.table.api.Schema;
import org.apache.flink.table.api.Table;
import org.apache.flink.table.api.bridge.java.StreamTableEnvironment;
import org.apache.flink.table.api.config.ExecutionConfigOptions;
import org.apache.flink.table.api.config.TableConfigOptions;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.types.Row;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;
import org.junit.jupiter.params.provider.EnumSource;

import java.nio.file.Path;
import java.time.Duration;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static org.appendlog.statebackend.MaterializingSink.add;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.FULL_BATCHES;
import static org.appendlog.statebackend.metrics.AppendLogMetrics.RESTORE_BYTES_READ;
import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink SQL jobs on the append-log backend, against {@code hashmap} as the control: the Table
 * runtime keeps mutable, reused {@code RowData} in value, list and map state, registers timers, and
 * (with {@code table.exec.state.ttl}) wraps its states in TTL. Every run of {@link
 * #sqlResultsAreExactAfterAFailureMidStream} fails once mid-stream, after a completed checkpoint,
 * restarts from it and must still end with exactly the final tables that Java computes from the
 * same generated input: on both backends plain and with mini-batch and a state TTL that nothing
 * reaches (an hour), and on appendlog wrapped by Flink's changelog backend (filesystem changelog
 * storage, materialized every 300 ms through appendlog's snapshots, which the restart reads back).
 *
 * <p>{@link #sqlResultsAreExactAfterRescalingFromASavepoint} rescales the same job on appendlog: a
 * canonical and a native savepoint taken mid-stream at parallelism 2 restore at 3 and at 1, and
 * every resumed job reads exactly the input the savepoint had not covered and ends with exactly
 * the final tables. State expiring under a TTL, across a restore, is {@link SqlStateTtlTest}'s.
 *
 * <p>The queries of one run are one job reading one input (see {@link #queries}, each with the
 * operator its plan must show): GROUP BYs over a GROUP BY (COUNT DISTINCT and MAX under retraction
 * keep map state, LISTAGG under retraction list state), Top-N over the input, over an updating SUM
 * and, cached by Flink and written to state at checkpoints, over a rising MAX (Top-3 and Top-1), a
 * deduplication keeping the last row by event time, event-time TUMBLE and SESSION window
 * aggregates (whose state turns over, so the log gets full batches too), and a LEFT JOIN with a
 * second, slower input, aggregated.
 *
 * <p>Exactly once is checked without a transactional sink: each query's changelog goes into a
 * {@link MaterializingSink}, which applies it to a multiset of rows held in checkpointed operator
 * state. A restart rolls that view back to the same checkpoint as the query's keyed state, so
 * replayed output is applied once, and the view of the attempt that finished is the query's final
 * table. A retraction of a row the view does not hold is recorded as an anomaly.
 */
class SqlJobTest {

    private static final int PARALLELISM = 2;
    /** The parallelisms a savepoint taken at {@link #PARALLELISM} is restored at. */
    private static final int[] RESCALED = {3, 1};
    /**
     * Records of the main input; the failure comes a tenth of them after a checkpoint that covers a
     * quarter has completed.
     */
    private static final long RECORDS = 16_000;
    private static final double RECORDS_PER_SECOND = 5_000;
    private static final int KEYS = 50;
    /** The join's input covers all keys but these last ones, with three rows each. */
    private static final int KEYS_WITHOUT_MATCH = 10;
    private static final int DIM_ROWS_PER_KEY = 3;
    private static final long DIM_RECORDS = (long) (KEYS - KEYS_WITHOUT_MATCH) * DIM_ROWS_PER_KEY;
    private static final double DIM_RECORDS_PER_SECOND = 40;
    private static final long MILLIS_PER_RECORD = 10;
    private static final long WINDOW_MILLIS = 2_000;
    private static final long SESSION_GAP_MILLIS = 1_000;

    @TempDir static Path tmp;

    /** Keeps the metrics of tasks that ended: those of the failed attempt and of the restore. */
    private static final InMemoryReporter METRICS = InMemoryReporter.createWithRetainedMetrics();

    /**
     * The metrics reporter, and where Flink's changelog is stored in the runs that enable it (a
     * task manager option).
     */
    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            MiniClusterJobs.cluster(
                    () ->
                            METRICS.addToConfiguration(
                                    CountingJob.withChangelogStorage(
                                            new Configuration(),
                                            changelogDir().toUri().toString())));

    /** A query of the job, and what its plan must show: the operator it is here to test. */
    private static final class Query {
        final String sql;
        final String planShows;
        /** The last column is a LISTAGG, whose order is that of arrival: compared sorted. */
        final boolean endsWithList;

        Query(String sql, String planShows) {
            this(sql, planShows, false);
        }

        Query(String sql, String planShows, boolean endsWithList) {
            this.sql = sql;
            this.planShows = planShows;
            this.endsWithList = endsWithList;
        }

        /** The final table as compared: a trailing list's elements sorted. */
        Map<String, Long> comparable(Map<String, Long> table) {
            if (!endsWithList) {
                return table;
            }
            Map<String, Long> sorted = new HashMap<>();
            table.forEach(
                    (row, count) -> {
                        int list = row.lastIndexOf(", ") + 2;
                        String[] elements = row.substring(list).split(",");
                        Arrays.sort(elements);
                        sorted.merge(
                                row.substring(0, list) + String.join(",", elements),
                                count,
                                Long::sum);
                    });
            return sorted;
        }
    }

    /** The queries of a run, by the name of their sink. */
    private static Map<String, Query> queries() {
        Map<String, Query> queries = new LinkedHashMap<>();
        queries.put(
                "group-by-of-group-by",
                new Query(
                        "SELECT MOD(cnt, 5) AS b, COUNT(*) AS ks, SUM(total) AS s,"
                                + " MAX(total) AS mx, MIN(dist) AS mn"
                                + " FROM (SELECT k, COUNT(*) AS cnt, SUM(v) AS total,"
                                + "       COUNT(DISTINCT MOD(v, 50)) AS dist"
                                + "       FROM input GROUP BY k)"
                                + " GROUP BY MOD(cnt, 5)",
                        // MAX under retraction and COUNT DISTINCT keep map state
                        "MAX_RETRACT"));
        queries.put(
                "listagg-of-group-by",
                new Query(
                        "SELECT MOD(cnt, 5) AS b, LISTAGG(CAST(k AS STRING)) AS ks"
                                + " FROM (SELECT k, COUNT(*) AS cnt FROM input GROUP BY k)"
                                + " GROUP BY MOD(cnt, 5)",
                        // LISTAGG under retraction keeps list state
                        "LISTAGG_RETRACT",
                        true));
        queries.put(
                "top-3-per-key",
                new Query(
                        "SELECT k, id, v, rn FROM ("
                                + " SELECT k, id, v,"
                                + "  ROW_NUMBER() OVER (PARTITION BY k ORDER BY v DESC, id ASC)"
                                + "   AS rn"
                                + " FROM input)"
                                + " WHERE rn <= 3",
                        "Rank(strategy=[AppendFastStrategy]"));
        queries.put(
                "top-3-of-sums",
                new Query(
                        "SELECT b, k, total, rn FROM ("
                                + " SELECT b, k, total,"
                                + "  ROW_NUMBER() OVER (PARTITION BY b ORDER BY total DESC, k ASC)"
                                + "   AS rn"
                                + " FROM (SELECT MOD(k, 5) AS b, k, SUM(v) AS total"
                                + "       FROM input GROUP BY k))"
                                + " WHERE rn <= 3",
                        "Rank(strategy=[RetractStrategy]"));
        queries.put(
                "top-3-of-last-ids",
                new Query(
                        "SELECT b, k, last_id, rn FROM ("
                                + " SELECT b, k, last_id,"
                                + "  ROW_NUMBER() OVER (PARTITION BY b ORDER BY last_id DESC) AS rn"
                                + " FROM (SELECT MOD(k, 5) AS b, k, MAX(id) AS last_id"
                                + "       FROM input GROUP BY MOD(k, 5), k))"
                                + " WHERE rn <= 3",
                        // a MAX only grows (and ids are unique): Flink's Top-N that caches
                        // its rows and writes them to state at checkpoints
                        "Rank(strategy=[UpdateFastStrategy"));
        queries.put(
                "top-1-of-last-ids",
                new Query(
                        "SELECT b, k, last_id FROM ("
                                + " SELECT b, k, last_id,"
                                + "  ROW_NUMBER() OVER (PARTITION BY b ORDER BY last_id DESC) AS rn"
                                + " FROM (SELECT MOD(k, 5) AS b, k, MAX(id) AS last_id"
                                + "       FROM input GROUP BY MOD(k, 5), k))"
                                + " WHERE rn = 1",
                        "Rank(strategy=[UpdateFastStrategy"));
        queries.put(
                "last-row-per-key",
                new Query(
                        "SELECT k, id, v FROM ("
                                + " SELECT k, id, v,"
                                + "  ROW_NUMBER() OVER (PARTITION BY k ORDER BY rt DESC) AS rn"
                                + " FROM input)"
                                + " WHERE rn = 1",
                        "Deduplicate(keep=[LastRow], key=[k], order=[ROWTIME]"));
        queries.put(
                "tumble-window",
                new Query(
                        "SELECT k, window_start, window_end, COUNT(*) AS c, SUM(v) AS s,"
                                + " MAX(v) AS mx"
                                + " FROM TABLE(TUMBLE(TABLE input, DESCRIPTOR(rt),"
                                + "  INTERVAL '2' SECOND))"
                                + " GROUP BY k, window_start, window_end",
                        "GlobalWindowAggregate(groupBy=[k], window=[TUMBLE("));
        queries.put(
                "session-window",
                new Query(
                        "SELECT k, window_start, window_end, COUNT(*) AS c, SUM(v) AS s"
                                + " FROM TABLE(SESSION(TABLE input PARTITION BY k, DESCRIPTOR(rt),"
                                + "  INTERVAL '1' SECOND))"
                                + " GROUP BY k, window_start, window_end",
                        "SESSION("));
        queries.put(
                "left-join-then-group-by",
                new Query(
                        "SELECT l.k, COUNT(*) AS c, COUNT(r.w) AS cw, SUM(r.w) AS sw"
                                + " FROM input AS l LEFT JOIN dim AS r ON l.k = r.rk"
                                + " GROUP BY l.k",
                        "Join(joinType=[LeftOuterJoin]"));
        return queries;
    }

    @ParameterizedTest(name = "{0}, {1}")
    @CsvSource({
        "appendlog, plain",
        "hashmap, plain",
        "appendlog, mini-batch and state ttl",
        "hashmap, mini-batch and state ttl",
        "appendlog, changelog"
    })
    void sqlResultsAreExactAfterAFailureMidStream(
            String backend, String mode, @InjectClusterClient ClusterClient<?> client)
            throws Exception {
        FailOnce.reset();
        MaterializingSink.reset();
        String run = backend + "-" + mode.replace(' ', '-');
        boolean changelog = mode.equals("changelog");
        Configuration jobConfig = jobConfig(backend, run);
        if (changelog) {
            CountingJob.withChangelog(jobConfig);
        }
        JobGraph jobGraph =
                jobGraph(
                        jobConfig,
                        mode.startsWith("mini-batch"),
                        PARALLELISM,
                        new FailOnce(RECORDS / 4, RECORDS / 10));
        JobID jobId = MiniClusterJobs.submit(client, jobGraph);
        MiniClusterJobs.awaitSuccess(client, jobId);

        assertThat(FailOnce.hasFailed()).as("the injected failure happened").isTrue();
        assertThat(MaterializingSink.finishedAttempts())
                .as("attempt that finished, per query: one failure, one restart")
                .containsOnlyKeys(queries().keySet())
                .allSatisfy((query, attempt) -> assertThat(attempt).isEqualTo(1));
        assertThat(MaterializingSink.restoredViews())
                .as("queries whose sink restored a non-empty view from the checkpoint")
                .containsExactlyInAnyOrderElementsOf(queries().keySet());
        if (changelog) {
            assertThat(changelogDir().resolve(jobId.toString()))
                    .as("Flink's changelog of the job")
                    .isDirectory();
        }
        if (backend.equals("appendlog")) {
            assertThat(logDir(run).resolve(jobId.toHexString()))
                    .as("the append-log backend's log of the job")
                    .isDirectory();
            // Under Flink's changelog these still hold: its periodic materializations (every
            // 300 ms) are this backend's snapshots, and the restart reads the last one back
            // through this backend before Flink replays the changelog written after it.
            assertThat(MiniClusterJobs.appendLogMetric(METRICS, jobId, RESTORE_BYTES_READ, 1))
                    .as("log bytes the restarted backends read (appendlog.restoreBytesRead)")
                    .isPositive();
            assertThat(MiniClusterJobs.appendLogMetric(METRICS, jobId, FULL_BATCHES, null))
                    .as("checkpoints that appended every live entry (appendlog.fullBatches),"
                            + " as the windows' state turned over")
                    .isPositive();
        } else {
            assertThat(logDir(run)).as("no append-log on %s", backend).doesNotExist();
        }

        assertFinalTables(String.format("on %s (%s)", backend, mode));
    }

    /**
     * The queries on appendlog at parallelism 2, a savepoint of {@code format} taken while the main
     * input holds after a third of its records and the job cancelled, then resumed from it at parallelism 3 and, from the same savepoint
     * again, at 1 (same operator ids and max parallelism, checked on the job graphs): each
     * resumed job reads exactly the input the savepoint had not covered (the rate-limited generator
     * is checkpointed), restores every sink's view (operator state at parallelism 1) and ends with
     * exactly the final tables computed in Java. A native savepoint is the log's own batches, which
     * the resumed backends split (3) or merge (1) by key group; a canonical one is read by Flink's
     * heap restore. No failure is injected: the fail-once operator stays, so that the graph is
     * that of the other runs.
     */
    @ParameterizedTest(name = "{0} savepoint")
    @EnumSource(
            value = SavepointFormatType.class,
            names = {"CANONICAL", "NATIVE"})
    void sqlResultsAreExactAfterRescalingFromASavepoint(
            SavepointFormatType format, @InjectClusterClient ClusterClient<?> client)
            throws Exception {
        String run = "appendlog-rescale-" + format.name().toLowerCase(Locale.ROOT);
        Configuration config = jobConfig("appendlog", run);
        Map<OperatorID, Integer> operators =
                maxParallelismByOperator(jobGraph(config, false, PARALLELISM, FailOnce.never()));
        for (int parallelism : RESCALED) {
            assertThat(
                            maxParallelismByOperator(
                                    jobGraph(config, false, parallelism, FailOnce.never())))
                    .as(
                            "operator ids and max parallelism at parallelism %d, as at %d",
                            parallelism,
                            PARALLELISM)
                    .isEqualTo(operators);
        }

        FailOnce.reset();
        MaterializingSink.reset();
        PausingInput.reset();
        // The main input holds after a third of its records, until the job is cancelled: the
        // savepoint is taken mid-stream however slow the machine, and the job cannot end first.
        JobID first =
                MiniClusterJobs.submit(
                        client,
                        jobGraph(
                                config,
                                false,
                                PARALLELISM,
                                FailOnce.never(),
                                PausingInput.source(
                                        RECORDS,
                                        RECORDS_PER_SECOND,
                                        RECORDS / 3,
                                        MiniClusterJobs.TIMEOUT)));
        MiniClusterJobs.awaitWhileRunning(
                client,
                first,
                "a third of the input",
                () -> PausingInput.paused() && FailOnce.passedRecords() == RECORDS / 3);
        // A savepoint, then a cancel, rather than stop-with-savepoint: the dim source finishes
        // during the run, and a source that finishes just as a savepoint is triggered fails that
        // savepoint ("checkpoint request for unknown task"). A failed stop-with-savepoint failed
        // the job over (seen here, in a canonical run); a failed savepoint is just taken again.
        String savepoint =
                MiniClusterJobs.savepoint(
                        client, first, tmp.resolve(run + "-savepoints").toUri().toString(), format);
        MiniClusterJobs.cancel(client, first);
        Long covered = FailOnce.recordsCoveredBy(SnapshotMetadata.load(savepoint).checkpointId());
        assertThat(covered)
                .as("input records the savepoint covers: those before the input held")
                .isEqualTo(RECORDS / 3);

        for (int parallelism : RESCALED) {
            FailOnce.reset();
            MaterializingSink.reset();
            JobGraph resumed = jobGraph(config, false, parallelism, FailOnce.never());
            resumed.setSavepointRestoreSettings(SavepointRestoreSettings.forPath(savepoint));
            JobID jobId = MiniClusterJobs.submit(client, resumed);
            MiniClusterJobs.awaitSuccess(client, jobId);

            assertThat(FailOnce.passedRecords())
                    .as(
                            "input records read after the restore at parallelism %d: those the"
                                    + " savepoint did not cover",
                            parallelism)
                    .isEqualTo(RECORDS - covered);
            assertThat(MaterializingSink.finishedAttempts())
                    .as("attempt that finished, per query, at parallelism %d: the first",
                            parallelism)
                    .containsOnlyKeys(queries().keySet())
                    .allSatisfy((query, attempt) -> assertThat(attempt).isZero());
            assertThat(MaterializingSink.restoredViews())
                    .as("queries whose sink restored a non-empty view from the savepoint")
                    .containsExactlyInAnyOrderElementsOf(queries().keySet());
            assertThat(logDir(run).resolve(jobId.toHexString()))
                    .as("the append-log backend's log of the resumed job")
                    .isDirectory();
            assertFinalTables(
                    String.format(
                            "after a %s savepoint at parallelism %d, resumed at %d",
                            format, PARALLELISM, parallelism));
        }
    }

    /** Per operator of the job, the max parallelism of its vertex. */
    private static Map<OperatorID, Integer> maxParallelismByOperator(JobGraph jobGraph) {
        Map<OperatorID, Integer> operators = new HashMap<>();
        for (JobVertex vertex : jobGraph.getVertices()) {
            for (OperatorIDPair operator : vertex.getOperatorIDs()) {
                operators.put(operator.getGeneratedOperatorID(), vertex.getMaxParallelism());
            }
        }
        return operators;
    }

    /**
     * Asserts that every query's final table, as the sinks published it, is the one computed in
     * Java (a trailing list's elements sorted).
     */
    private static void assertFinalTables(String description) {
        Map<String, Map<String, Long>> expected = expectedTables();
        Map<String, Map<String, Long>> comparableExpected = new TreeMap<>();
        Map<String, Map<String, Long>> comparableActual = new TreeMap<>();
        for (Map.Entry<String, Query> query : queries().entrySet()) {
            comparableExpected.put(
                    query.getKey(), query.getValue().comparable(expected.get(query.getKey())));
            comparableActual.put(
                    query.getKey(),
                    query.getValue().comparable(MaterializingSink.finalView(query.getKey())));
        }
        MaterializingSink.assertFinalTables(comparableExpected, comparableActual, description);
    }

    private static Path changelogDir() {
        return tmp.resolve("changelog");
    }

    private static Path logDir(String run) {
        return tmp.resolve(run + "-log");
    }

    private static Configuration jobConfig(String backend, String run) {
        return CountingJob.withRestarts(
                CountingJob.withBackend(
                        CountingJob.jobConfig(tmp.resolve(run + "-checkpoints").toUri().toString()),
                        backend,
                        logDir(run).toUri().toString()));
    }

    /**
     * The job of all queries at {@code parallelism} (sources and sinks at 1), {@code failure}
     * right after the main input's source.
     */
    private static JobGraph jobGraph(
            Configuration jobConfig, boolean miniBatchAndTtl, int parallelism, FailOnce failure) {
        return jobGraph(
                jobConfig,
                miniBatchAndTtl,
                parallelism,
                failure,
                new DataGeneratorSource<>(
                        n -> n,
                        RECORDS,
                        RateLimiterStrategy.perSecond(RECORDS_PER_SECOND),
                        Types.LONG));
    }

    /** The same job with {@code input} as the main input, the numbers 0 .. {@link #RECORDS}-1. */
    private static JobGraph jobGraph(
            Configuration jobConfig,
            boolean miniBatchAndTtl,
            int parallelism,
            FailOnce failure,
            DataGeneratorSource<Long> input) {
        StreamExecutionEnvironment env = new StreamExecutionEnvironment(jobConfig);
        env.setParallelism(parallelism);
        env.setMaxParallelism(CountingJob.MAX_PARALLELISM);
        StreamTableEnvironment tableEnv = StreamTableEnvironment.create(env);
        tableEnv.getConfig().set(TableConfigOptions.LOCAL_TIME_ZONE, "UTC");
        if (miniBatchAndTtl) {
            tableEnv.getConfig().set(ExecutionConfigOptions.TABLE_EXEC_MINIBATCH_ENABLED, true);
            tableEnv.getConfig()
                    .set(
                            ExecutionConfigOptions.TABLE_EXEC_MINIBATCH_ALLOW_LATENCY,
                            Duration.ofMillis(100));
            tableEnv.getConfig().set(ExecutionConfigOptions.TABLE_EXEC_MINIBATCH_SIZE, 200L);
            // Long enough that nothing expires: the states are TTL states all the same.
            tableEnv.getConfig()
                    .set(ExecutionConfigOptions.IDLE_STATE_RETENTION, Duration.ofHours(1));
        }

        // One reader: the timestamps rise across the whole input, so windows close all along
        // (and their state turns over) rather than at the end of a second reader's range.
        DataStream<Row> rows =
                env.fromSource(input, WatermarkStrategy.noWatermarks(), "input")
                        .setParallelism(1)
                        .uid("input")
                        .map(failure)
                        .setParallelism(1)
                        .uid("fail-once")
                        .name("fail-once")
                        .map(SqlJobTest::inputRow)
                        .returns(INPUT_TYPE)
                        .setParallelism(1)
                        .uid("input-rows");
        tableEnv.createTemporaryView(
                "input",
                tableEnv.fromDataStream(
                        rows,
                        Schema.newBuilder()
                                .columnByExpression("rt", "TO_TIMESTAMP_LTZ(ts, 3)")
                                .watermark("rt", "rt - INTERVAL '1' SECOND")
                                .build()));
        DataStream<Row> dim =
                env.fromSource(
                                new DataGeneratorSource<>(
                                        SqlJobTest::dimRow,
                                        DIM_RECORDS,
                                        RateLimiterStrategy.perSecond(DIM_RECORDS_PER_SECOND),
                                        DIM_TYPE),
                                WatermarkStrategy.noWatermarks(),
                                "dim")
                        .setParallelism(1)
                        .uid("dim");
        tableEnv.createTemporaryView("dim", tableEnv.fromDataStream(dim));

        for (Map.Entry<String, Query> query : queries().entrySet()) {
            Table table = tableEnv.sqlQuery(query.getValue().sql);
            assertThat(table.explain())
                    .as("plan of %s", query.getKey())
                    .contains(query.getValue().planShows);
            MaterializingSink.materialize(tableEnv, query.getKey(), table);
        }
        return env.getStreamGraph().getJobGraph();
    }

    // ---------------------------------------------------------------------------------------
    // The input, and the final tables computed from it in Java
    // ---------------------------------------------------------------------------------------

    private static final TypeInformation<Row> INPUT_TYPE =
            Types.ROW_NAMED(
                    new String[] {"id", "k", "v", "ts"},
                    Types.LONG,
                    Types.INT,
                    Types.LONG,
                    Types.LONG);

    private static final TypeInformation<Row> DIM_TYPE =
            Types.ROW_NAMED(new String[] {"j", "rk", "w"}, Types.LONG, Types.INT, Types.LONG);

    private static long mix(long n) {
        return (n * 0x9E3779B97F4A7C15L) >>> 17;
    }

    /** Keys spread unevenly, so per-key counts differ. */
    private static int key(long n) {
        return (int) Math.floorMod(mix(n), (long) KEYS);
    }

    private static long value(long n) {
        return Math.floorMod(mix(n) >>> 11, 1000L);
    }

    private static long timestamp(long n) {
        return n * MILLIS_PER_RECORD;
    }

    private static Row inputRow(long n) {
        return Row.of(n, key(n), value(n), timestamp(n));
    }

    private static Row dimRow(long j) {
        return Row.of(j, (int) (j % (KEYS - KEYS_WITHOUT_MATCH)), dimWeight(j));
    }

    private static long dimWeight(long j) {
        return j * 7 + 1;
    }

    /** Per query, the multiset of the rows of its final table. */
    private static Map<String, Map<String, Long>> expectedTables() {
        Map<Integer, List<Long>> byKey = new TreeMap<>();
        for (long n = 0; n < RECORDS; n++) {
            byKey.computeIfAbsent(key(n), k -> new ArrayList<>()).add(n);
        }
        Map<String, Map<String, Long>> tables = new HashMap<>();

        // group-by-of-group-by
        Map<Integer, long[]> buckets = new TreeMap<>(); // count, sum, max, min distinct
        Map<Integer, Long> sums = new TreeMap<>();
        for (Map.Entry<Integer, List<Long>> key : byKey.entrySet()) {
            long count = key.getValue().size();
            long total = 0;
            Set<Long> distinct = new HashSet<>();
            for (long n : key.getValue()) {
                total += value(n);
                distinct.add(value(n) % 50);
            }
            sums.put(key.getKey(), total);
            long[] bucket =
                    buckets.computeIfAbsent(
                            (int) (count % 5),
                            b -> new long[] {0, 0, Long.MIN_VALUE, Long.MAX_VALUE});
            bucket[0]++;
            bucket[1] += total;
            bucket[2] = Math.max(bucket[2], total);
            bucket[3] = Math.min(bucket[3], distinct.size());
        }
        Map<String, Long> groupBy = new HashMap<>();
        buckets.forEach((b, a) -> add(groupBy, b, a[0], a[1], a[2], a[3]));
        tables.put("group-by-of-group-by", groupBy);

        // listagg-of-group-by
        Map<Integer, List<String>> keysByCount = new TreeMap<>();
        byKey.forEach(
                (k, ns) ->
                        keysByCount
                                .computeIfAbsent(ns.size() % 5, b -> new ArrayList<>())
                                .add(String.valueOf(k)));
        Map<String, Long> listAgg = new HashMap<>();
        keysByCount.forEach((b, ks) -> add(listAgg, b, String.join(",", ks)));
        tables.put("listagg-of-group-by", listAgg);

        // top-3-per-key
        Map<String, Long> top3 = new HashMap<>();
        byKey.forEach(
                (k, ns) -> {
                    List<Long> sorted = new ArrayList<>(ns);
                    sorted.sort(
                            (a, b) ->
                                    value(a) != value(b)
                                            ? Long.compare(value(b), value(a))
                                            : Long.compare(a, b));
                    for (int rank = 1; rank <= Math.min(3, sorted.size()); rank++) {
                        long n = sorted.get(rank - 1);
                        add(top3, k, n, value(n), (long) rank);
                    }
                });
        tables.put("top-3-per-key", top3);

        // top-3-of-sums
        Map<String, Long> top3OfSums = new HashMap<>();
        Map<Integer, List<Integer>> keysByBucket =
                sums.keySet().stream().collect(Collectors.groupingBy(k -> k % 5));
        keysByBucket.forEach(
                (b, ks) -> {
                    List<Integer> sorted = new ArrayList<>(ks);
                    sorted.sort(
                            (x, y) ->
                                    !sums.get(x).equals(sums.get(y))
                                            ? Long.compare(sums.get(y), sums.get(x))
                                            : Integer.compare(x, y));
                    for (int rank = 1; rank <= Math.min(3, sorted.size()); rank++) {
                        int k = sorted.get(rank - 1);
                        add(top3OfSums, b, k, sums.get(k), (long) rank);
                    }
                });
        tables.put("top-3-of-sums", top3OfSums);

        // top-3-of-last-ids, top-1-of-last-ids
        Map<String, Long> top3OfLastIds = new HashMap<>();
        Map<String, Long> top1OfLastIds = new HashMap<>();
        keysByBucket.forEach(
                (b, ks) -> {
                    List<Long> lastIds = new ArrayList<>();
                    ks.forEach(k -> lastIds.add(Collections.max(byKey.get(k))));
                    lastIds.sort(Collections.reverseOrder());
                    for (int rank = 1; rank <= Math.min(3, lastIds.size()); rank++) {
                        long n = lastIds.get(rank - 1);
                        add(top3OfLastIds, b, key(n), n, (long) rank);
                    }
                    add(top1OfLastIds, b, key(lastIds.get(0)), lastIds.get(0));
                });
        tables.put("top-3-of-last-ids", top3OfLastIds);
        tables.put("top-1-of-last-ids", top1OfLastIds);

        // last-row-per-key: timestamps grow with n
        Map<String, Long> lastRow = new HashMap<>();
        byKey.forEach(
                (k, ns) -> {
                    long last = Collections.max(ns);
                    add(lastRow, k, last, value(last));
                });
        tables.put("last-row-per-key", lastRow);

        // tumble-window
        Map<List<Long>, long[]> windows = new HashMap<>(); // count, sum, max
        for (long n = 0; n < RECORDS; n++) {
            long start = timestamp(n) - Math.floorMod(timestamp(n), WINDOW_MILLIS);
            long[] window =
                    windows.computeIfAbsent(
                            List.of((long) key(n), start), w -> new long[] {0, 0, Long.MIN_VALUE});
            window[0]++;
            window[1] += value(n);
            window[2] = Math.max(window[2], value(n));
        }
        Map<String, Long> tumble = new HashMap<>();
        windows.forEach(
                (w, a) ->
                        add(
                                tumble,
                                w.get(0),
                                utc(w.get(1)),
                                utc(w.get(1) + WINDOW_MILLIS),
                                a[0],
                                a[1],
                                a[2]));
        tables.put("tumble-window", tumble);

        // session-window: a record joins the session if it comes at most the gap after the
        // session's last record (Flink's session windows [t, t + gap) merge when they touch)
        Map<String, Long> sessions = new HashMap<>();
        byKey.forEach(
                (k, ns) -> {
                    long first = -1;
                    long last = -1;
                    long count = 0;
                    long sum = 0;
                    for (long n : ns) {
                        if (count > 0 && timestamp(n) > last + SESSION_GAP_MILLIS) {
                            add(sessions, k, utc(first), utc(last + SESSION_GAP_MILLIS), count, sum);
                            count = 0;
                            sum = 0;
                        }
                        if (count == 0) {
                            first = timestamp(n);
                        }
                        last = timestamp(n);
                        count++;
                        sum += value(n);
                    }
                    add(sessions, k, utc(first), utc(last + SESSION_GAP_MILLIS), count, sum);
                });
        tables.put("session-window", sessions);

        // left-join-then-group-by
        Map<Integer, List<Long>> weights = new TreeMap<>();
        for (long j = 0; j < DIM_RECORDS; j++) {
            weights.computeIfAbsent(dimRow(j).<Integer>getFieldAs(1), k -> new ArrayList<>())
                    .add(dimWeight(j));
        }
        Map<String, Long> join = new HashMap<>();
        byKey.forEach(
                (k, ns) -> {
                    List<Long> matches = weights.getOrDefault(k, Collections.emptyList());
                    long rows = ns.size();
                    if (matches.isEmpty()) {
                        add(join, k, rows, 0L, null);
                    } else {
                        long sum = matches.stream().mapToLong(Long::longValue).sum();
                        add(join, k, rows * matches.size(), rows * matches.size(), rows * sum);
                    }
                });
        tables.put("left-join-then-group-by", join);
        return tables;
    }

    private static LocalDateTime utc(long epochMillis) {
        return LocalDateTime.ofEpochSecond(
                Math.floorDiv(epochMillis, 1000L),
                (int) Math.floorMod(epochMillis, 1000L) * 1_000_000,
                ZoneOffset.UTC);
    }
}
