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

import org.appendlog.cec.CecMiniCluster;
import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecMode;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecRecordKind;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.cec.source.CecLogSource;
import org.appendlog.cec.source.CecLogSourceMetrics;
import org.appendlog.statebackend.faults.ReliabilityLog;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Histogram;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.groups.OperatorMetricGroup;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.TumblingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.File;
import java.lang.reflect.Field;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.ConcurrentHashMap;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Eventual mode on real jobs: a barrier writes no CHECK, and recovery reads a tail of the log
 * bounded by the policy's T and H, where open-only mode reads back to the oldest open window.
 * The input: {@value #QUIET_KEYS} keys that get one element at the start and never change, then
 * {@value #BUSY_KEYS} busy keys, one element per millisecond of event time, all in one-hour
 * tumbling event-time windows, so every window stays open until the input ends.
 */
class CecEventualModeTest {

    private static final int QUIET_KEYS = 10;
    private static final int BUSY_KEYS = 5;

    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();
    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("cec-eventual-recovery");

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            CecMiniCluster.withFourSlots(REPORTER.addToConfiguration(new Configuration()));

    /** Event indexes at (or, waiting for a checkpoint, after) which the job fails once each. */
    static final Set<Long> PENDING_FAILURES = ConcurrentHashMap.newKeySet();

    @TempDir File tmp;

    @Test
    void eventualModeWritesNoCheckAtBarriers() throws Exception {
        // The policy off (T = 0): barrier mode then writes CHECKs at barriers only, eventual mode none at all.
        Run eventual = run(CecMode.EVENTUAL, Duration.ZERO, 30_000, 0);
        Run barrier = run(CecMode.BARRIER, Duration.ZERO, 30_000, 0);
        System.out.printf(
                "policy off: eventual %d barriers (longest %d µs), %d CHECKs in the log; barrier %d barriers (longest %d"
                        + " µs), %d CHECKs in the log%n",
                eventual.barriers, eventual.barrierMicrosMax, eventual.checksInLog, barrier.barriers,
                barrier.barrierMicrosMax, barrier.checksInLog);

        assertThat(eventual.barriers).as("barriers the eventual operator passed").isGreaterThanOrEqualTo(3);
        // Measured in µs: an eventual barrier, a flush and a few hundred bytes of state, is well under a millisecond.
        assertThat(eventual.barrierMicrosMax).as("the eventual operator's longest barrier, µs").isPositive();
        assertThat(eventual.counter(CecMetrics.BARRIER_CHECK_TUPLES)).isZero();
        assertThat(eventual.checksInLog).as("CHECK tuples in the eventual log").isZero();
        assertThat(eventual.counter(CecMetrics.INPUT_TUPLES)).as("INPUT records").isEqualTo(30_000);

        assertThat(barrier.barriers).as("barriers the barrier-mode operator passed").isGreaterThanOrEqualTo(3);
        assertThat(barrier.checksInLog)
                .as("CHECK tuples in the barrier-mode log: all written at barriers")
                .isPositive()
                .isEqualTo(barrier.counter(CecMetrics.BARRIER_CHECK_TUPLES));
        assertThat(barrier.counter(CecMetrics.INPUT_TUPLES)).as("INPUT records").isZero();
    }

    @Test
    void eventualRecoveryReadsABoundedTailWhereOpenOnlyReadsBackToTheOldestWindow() throws Exception {
        Run eventual = run(CecMode.EVENTUAL, Duration.ofMillis(100), 40_000, 0, 12_000L, 32_000L);
        Run openOnly = run(CecMode.OPEN_ONLY, Duration.ofMillis(100), 40_000, 0, 12_000L, 32_000L);
        System.out.printf(
                "records read by the restores after failures at events 12 000 and 32 000: eventual %s (%d inputs replayed),"
                        + " open-only %s (%d inputs replayed)%n",
                eventual.recordsScanned, eventual.inputsReplayed, openOnly.recordsScanned, openOnly.inputsReplayed);

        assertThat(openOnly.recordsScanned).as("open-only restores").hasSize(2);
        assertThat(openOnly.recordsScanned.get(0)).as("open-only: back to the quiet windows' OPENs").isGreaterThan(6_000);
        assertThat(openOnly.recordsScanned.get(1))
                .as("open-only: 20 000 events later, that much more to read")
                .isGreaterThan(openOnly.recordsScanned.get(0) + 10_000);
        assertThat(openOnly.counter(CecMetrics.CHECK_TUPLES)).isZero();

        assertThat(eventual.recordsScanned).as("eventual restores").hasSize(2);
        assertThat(eventual.recordsScanned)
                .as("eventual: the 15 windows' footprints and about T + H of input, whatever the windows' age")
                .allSatisfy(n -> assertThat(n).isGreaterThanOrEqualTo(QUIET_KEYS + BUSY_KEYS).isLessThan(5_000));
        assertThat(eventual.counter(CecMetrics.BARRIER_CHECK_TUPLES)).isZero();
        assertThat(eventual.counter(CecMetrics.CHECK_TUPLES)).as("policy CHECKs").isPositive();
        RELIABILITY.record(
                "eventual mode, time windows open from the first event, failures at events 12 000 and 32 000",
                "restored twice, each restore read fewer than 5 000 log records; committed RESULTs equal the counts");
        RELIABILITY.record(
                "open-only mode, the same job and failures",
                "restored twice, reading back to the oldest window's OPEN (more than 6 000 records, the later 10 000 more);"
                        + " committed RESULTs equal the counts");
    }

    /**
     * Count windows close and reopen under the same (key, window) identity: a restore must replay
     * each element into the incarnation it reached. The quiet keys' windows never fill.
     */
    @Test
    void countWindowsAreReplayedExactly() throws Exception {
        Run eventual = run(CecMode.EVENTUAL, Duration.ofMillis(100), 40_000, 7, 12_000L, 32_000L);
        System.out.printf(
                "count windows, eventual: restores read %s records (%d inputs replayed)%n",
                eventual.recordsScanned, eventual.inputsReplayed);
        assertThat(eventual.recordsScanned).as("restores").hasSize(2);
        RELIABILITY.record(
                "eventual mode, count windows of 7, failures at events 12 000 and 32 000",
                "restored twice; committed RESULTs are exactly the full windows");
    }

    /**
     * Runs the job in {@code mode} on {@code events} events, failing once at each of {@code
     * failAt}, in one-hour tumbling event-time windows or, if {@code countSize > 0}, in count
     * windows of that size; checks that the committed RESULTs are exactly the counts per window.
     */
    private Run run(CecMode mode, Duration period, long events, long countSize, Long... failAt) throws Exception {
        File dir = new File(tmp, mode + "-" + events + "-" + countSize);
        CecWindows<Tuple2<String, Long>, String> windows = input(environment(new Configuration(), failAt), events);
        CecOptions options = options(dir, mode, period);
        List<String> expected = expectedResults(events, countSize);
        return countSize > 0
                ? runAndCheck(dir, windows.countWindow(countSize).aggregate(new WordCountJob.Count(), options), expected)
                : runAndCheck(dir, hourWindows(windows, options), expected);
    }

    /**
     * A savepoint taken in one mode restores in another: a checkpoint records whether its stream
     * logs the input, and the restore follows it (a replay also in barrier mode, whose next barrier
     * then checks every replayed window). The restored job fails once more, to restore in its own mode.
     */
    @ParameterizedTest(name = "{0} to {1}")
    @CsvSource({"EVENTUAL, BARRIER", "BARRIER, EVENTUAL", "OPEN_ONLY, EVENTUAL"})
    void aSavepointRestoresInAnotherMode(CecMode from, CecMode to) throws Exception {
        File dir = new File(tmp, from + "-to-" + to);
        StreamExecutionEnvironment first = environment(new Configuration());
        hourWindows(input(first, 40_000), options(dir, from, Duration.ofMillis(100)))
                .uid("cec-under-test")
                .addSink(new DiscardingSink<>());
        Configuration restore =
                CecMiniCluster.stopAfterFirstCommit(first.executeAsync(), dir, new File(tmp, "savepoints"), false);
        CecWindows<Tuple2<String, Long>, String> windows = input(environment(restore, 30_000L), 40_000);
        Run run = runAndCheck(
                dir, hourWindows(windows, options(dir, to, Duration.ofMillis(100))), expectedResults(40_000, 0));
        assertThat(run.recordsScanned).as("the savepoint's restore and the failure's").hasSize(2);
        RELIABILITY.record(
                "savepoint in " + from + " mode restored in " + to + " mode, then a failure",
                "restored from the savepoint and after the failure; committed RESULTs equal the counts");
    }

    /** The environment of a test job that fails once at each of {@code failAt}. */
    private static StreamExecutionEnvironment environment(Configuration config, Long... failAt) {
        PENDING_FAILURES.clear();
        Collections.addAll(PENDING_FAILURES, failAt);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(1);
        env.enableCheckpointing(100);
        env.getConfig().setAutoWatermarkInterval(10);
        env.setRestartStrategy(RestartStrategies.fixedDelayRestart(failAt.length, 50));
        return env;
    }

    /** {@code events} events ({@link #event}), 10 000 a second, keyed by word. */
    private static CecWindows<Tuple2<String, Long>, String> input(StreamExecutionEnvironment env, long events) {
        DataGeneratorSource<Tuple2<String, Long>> source =
                new DataGeneratorSource<>(
                        CecEventualModeTest::event,
                        events,
                        RateLimiterStrategy.perSecond(10_000),
                        Types.TUPLE(Types.STRING, Types.LONG));
        DataStream<Tuple2<String, Long>> input =
                env.fromSource(
                                source,
                                WatermarkStrategy.<Tuple2<String, Long>>forMonotonousTimestamps()
                                        .withTimestampAssigner((e, ts) -> e.f1),
                                "events")
                        .uid("events")
                        .map(new FailAt())
                        .uid("fail-at");
        return CecWindows.of(input.keyBy(e -> e.f0));
    }

    private static CecOptions options(File dir, CecMode mode, Duration period) {
        return CecOptions.builder(dir.toURI().toString())
                .mode(mode)
                .period(period)
                .slowThreshold(Duration.ofMillis(100))
                .build();
    }

    private static SingleOutputStreamOperator<CecRecord<String, TimeWindow, Long, Long>> hourWindows(
            CecWindows<Tuple2<String, Long>, String> windows, CecOptions options) {
        return windows.window(TumblingEventTimeWindows.of(Duration.ofHours(1))).aggregate(new WordCountJob.Count(), options);
    }

    /** Runs the job of {@code cec}, checks its committed RESULTs ("key=count") and returns what it measured. */
    private <W extends Window> Run runAndCheck(
            File dir, SingleOutputStreamOperator<CecRecord<String, W, Long, Long>> cec, List<String> expected)
            throws Exception {
        cec.name("cec-under-test").uid("cec-under-test").addSink(new DiscardingSink<>());
        JobID job = cec.getExecutionEnvironment().execute("cec").getJobID();
        assertThat(PENDING_FAILURES).as("failures that did not fire").isEmpty();
        List<String> results = new ArrayList<>();
        long checks = 0;
        for (CecRecord<String, W, Long, Long> r : readCommitted(dir, cec.getType())) {
            if (r.isResult()) {
                results.add(r.getKey() + "=" + r.getValue());
            }
            checks += r.getKind() == CecRecordKind.CHECK ? 1 : 0;
        }
        assertThat(results).as("committed RESULTs").containsExactlyInAnyOrderElementsOf(expected);
        return new Run(REPORTER.findOperatorMetricGroups(job, "cec-under-test"), checks);
    }

    /** Event i: the quiet keys first, one each, then the busy keys in turn; event time i ms. */
    private static Tuple2<String, Long> event(long i) {
        return Tuple2.of(i < QUIET_KEYS ? "quiet-" + i : "busy-" + i % BUSY_KEYS, i);
    }

    /**
     * Per window "key=count": with time windows one per key; with count windows of {@code
     * countSize} one per full window (windows that never fill do not fire, as in Flink).
     */
    private static List<String> expectedResults(long events, long countSize) {
        List<String> results = new ArrayList<>();
        for (int k = 0; k < QUIET_KEYS; k++) {
            if (countSize <= 1) {
                results.add("quiet-" + k + "=1");
            }
        }
        for (int k = 0; k < BUSY_KEYS; k++) {
            long n = 0;
            for (long i = QUIET_KEYS; i < events; i++) {
                n += i % BUSY_KEYS == k ? 1 : 0;
            }
            if (countSize == 0) {
                results.add("busy-" + k + "=" + n);
            }
            for (long full = 0; countSize > 0 && full < n / countSize; full++) {
                results.add("busy-" + k + "=" + countSize);
            }
        }
        return results;
    }

    private static <W extends Window> List<CecRecord<String, W, Long, Long>> readCommitted(
            File dir, TypeInformation<CecRecord<String, W, Long, Long>> type) throws Exception {
        List<CecRecord<String, W, Long, Long>> all = new ArrayList<>();
        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setParallelism(1);
        reader.fromSource(
                        CecLogSource.of(dir.toURI().toString(), type, Long.MIN_VALUE),
                        WatermarkStrategy.noWatermarks(),
                        "committed")
                .executeAndCollect()
                .forEachRemaining(all::add);
        return all;
    }

    /** The README's metrics table names every metric constant, with the kind the operator registers. */
    @Test
    void theReadmeTableIsWhatTheOperatorRegisters() throws Exception {
        Map<String, String> documented = new TreeMap<>();
        Matcher row =
                Pattern.compile("(?m)^\\| `(\\w+)` \\| (counter|gauge|histogram) \\|")
                        .matcher(Files.readString(java.nio.file.Path.of("README.md")));
        while (row.find()) {
            documented.put(row.group(1), row.group(2));
        }
        Set<String> constants = new TreeSet<>();
        for (Class<?> names : List.of(CecMetrics.class, CecLogSourceMetrics.class)) {
            for (Field field : names.getFields()) {
                constants.add((String) field.get(null));
            }
        }
        assertThat(documented.keySet()).isEqualTo(constants);

        Run run = run(CecMode.EVENTUAL, Duration.ZERO, 1_000, 0);
        for (String name : constants) {
            if (name.equals(CecLogSourceMetrics.LAG_BYTES)) {
                continue; // the source's, not the operator's
            }
            Metric metric = run.registered.get(name);
            assertThat(metric).as(name).isNotNull();
            String kind =
                    metric instanceof Counter ? "counter" : metric instanceof Histogram ? "histogram" : "gauge";
            assertThat(kind).as(name).isEqualTo(documented.get(name));
        }
    }

    /** The operator's metrics over all attempts of its one subtask, and the CHECKs in its committed log. */
    private static final class Run {
        final Map<String, Long> counters = new HashMap<>();
        /** Per restore, ascending. */
        final List<Long> recordsScanned = new ArrayList<>();
        /** Over all restores. */
        long inputsReplayed;
        final long barriers;
        /** The task thread's longest pause at a barrier, over the attempts. */
        final long barrierMicrosMax;
        final long checksInLog;
        /** What an attempt registered, by name. */
        final Map<String, Metric> registered = new HashMap<>();

        Run(List<OperatorMetricGroup> attempts, long checksInLog) {
            this.checksInLog = checksInLog;
            long barriers = 0;
            long barrierMicrosMax = 0;
            for (OperatorMetricGroup attempt : attempts) {
                Map<String, Metric> metrics = REPORTER.getMetricsByGroup(attempt);
                registered.putAll(metrics);
                for (String name : List.of(CecMetrics.CHECK_TUPLES, CecMetrics.BARRIER_CHECK_TUPLES, CecMetrics.INPUT_TUPLES)) {
                    counters.merge(name, ((Counter) metrics.get(name)).getCount(), Long::sum);
                }
                Histogram barrierMicros = (Histogram) metrics.get(CecMetrics.BARRIER_MICROS);
                barriers += barrierMicros.getCount();
                barrierMicrosMax = Math.max(barrierMicrosMax, barrierMicros.getStatistics().getMax());
                long scanned = (Long) ((Gauge<?>) metrics.get(CecMetrics.RECOVERY_RECORDS_SCANNED)).getValue();
                if (scanned > 0) {
                    recordsScanned.add(scanned);
                    inputsReplayed += (Long) ((Gauge<?>) metrics.get(CecMetrics.REPLAY_RECORDS)).getValue();
                }
            }
            this.barriers = barriers;
            this.barrierMicrosMax = barrierMicrosMax;
            // The attempts come in no particular order; in open-only mode a later restore reads more.
            Collections.sort(recordsScanned);
        }

        long counter(String name) {
            return counters.getOrDefault(name, 0L);
        }
    }

    /**
     * Fails once for each pending index, at the first event at or after it (event time = index)
     * once a checkpoint completed in this attempt: every failure then restores from a checkpoint,
     * also on a machine so loaded that the first checkpoint comes late.
     */
    static final class FailAt implements MapFunction<Tuple2<String, Long>, Tuple2<String, Long>>, CheckpointListener {
        private boolean checkpointed;

        @Override
        public Tuple2<String, Long> map(Tuple2<String, Long> e) {
            for (Long at : PENDING_FAILURES) {
                if (checkpointed && e.f1 >= at && PENDING_FAILURES.remove(at)) {
                    throw new RuntimeException("Injected failure at event " + e.f1);
                }
            }
            return e;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            checkpointed = true;
        }
    }
}
