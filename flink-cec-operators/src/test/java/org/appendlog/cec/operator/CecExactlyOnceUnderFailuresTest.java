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
import org.appendlog.cec.CommittedResults;
import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecMode;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecRecordKind;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.testing.CheckpointHistory;
import org.appendlog.testing.SlowDown;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.typeutils.GenericTypeInfo;
import org.apache.flink.api.java.typeutils.runtime.kryo.JavaSerializer;
import org.apache.flink.client.program.rest.RestClusterClient;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.WebOptions;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A windowed word count with failures injected at random points, before the CEC operator (in the
 * source's chain) and after it (while it forwards results). The RESULT tuples in the persisted
 * stream must equal those of a failure-free run: none lost, none duplicated. Also with unaligned
 * checkpoints under backpressure, where the restored checkpoints hold word events and the
 * operator's own tuples in flight: Flink's REST API shows the restored checkpoint unaligned with
 * persisted in-flight bytes, and after the last restore the tasks behind the operator receive, of
 * every kind it writes, more tuples than it emits: those the checkpoint held in flight. Every
 * {@link CecMode} runs, compared with a failure-free run in barrier mode.
 */
class CecExactlyOnceUnderFailuresTest {

    private static final long EVENTS = 40_000;
    private static final int WORDS = 40;
    private static final long MILLIS_PER_EVENT = 3;

    /** Its REST API keeps the statistics of 1 000 checkpoints per job (10 by default). */
    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER =
            CecMiniCluster.withFourSlots(new Configuration().set(WebOptions.CHECKPOINTS_HISTORY_SIZE, 1_000));

    @TempDir static File tmp;

    private static List<String> failureFreeResults;

    /** Failure points that have not fired yet: "source:<event index>" and "result:<n-th result>". */
    static final Set<String> PENDING_FAILURES = ConcurrentHashMap.newKeySet();
    static final AtomicInteger FAILURES = new AtomicInteger();
    static final AtomicInteger RESULTS_SEEN = new AtomicInteger();
    /** Tuples per "emitted|received:attempt:kind": what the CEC subtasks emitted, what slowed tasks received. */
    static final Map<String, LongAdder> TUPLES = new ConcurrentHashMap<>();

    /** Runs once, on the shared MiniCluster (which is wired to the environment per test). */
    private static void failureFreeRun() throws Exception {
        if (failureFreeResults != null) {
            return;
        }
        PENDING_FAILURES.clear();
        File dir = new File(tmp, "baseline");
        failureFreeResults =
                persistedResults(dir, runJob(dir, CecMode.BARRIER, new WordCountJob.Count(), false).type);
        // Every event lies in 4 sliding windows and every window fires by the end of input.
        long total = failureFreeResults.stream().mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf('|') + 1))).sum();
        assertThat(total).isEqualTo(EVENTS * 4);
    }

    /** Every seed in the default mode, one in each other mode (each run takes seconds). */
    static Stream<Arguments> modesAndSeeds() {
        return Stream.of(
                Arguments.of(CecMode.EVENTUAL, 11L),
                Arguments.of(CecMode.EVENTUAL, 23L),
                Arguments.of(CecMode.EVENTUAL, 37L),
                Arguments.of(CecMode.OPEN_ONLY, 23L),
                Arguments.of(CecMode.BARRIER, 37L));
    }

    @ParameterizedTest(name = "{0}, seed {1}")
    @MethodSource("modesAndSeeds")
    void persistedResultsAreExactlyOnce(CecMode mode, long seed) throws Exception {
        persistedResultsAreExactlyOnce(
                mode, seed, new WordCountJob.Count(), new File(tmp, mode + "-seed-" + seed), false);
    }

    /**
     * Unaligned checkpoints (from the start, no aligned phase) under backpressure: every tuple the
     * CEC operator emits crosses the network to slowed tasks, so its OPEN, CHECK and RESULT tuples
     * (in barrier mode also the CHECKs written before a barrier) wait in the network behind the
     * barriers, and the word events wait before the operator; the checkpoints persist both as
     * channel state, and a restore sends them on again.
     */
    @ParameterizedTest
    @EnumSource(CecMode.class)
    void persistedResultsAreExactlyOnceWithUnalignedCheckpoints(
            CecMode mode, @InjectClusterClient RestClusterClient<?> client) throws Exception {
        File dir = new File(tmp, mode + "-unaligned");
        JobID jobId = persistedResultsAreExactlyOnce(mode, 11, new WordCountJob.Count(), dir, true);

        CheckpointHistory checkpoints = CheckpointHistory.of(client, jobId);
        Map<CecRecordKind, Long> inFlight = tuplesRestoredInFlight();
        System.out.printf("unaligned, %s: restored %s holding in flight %s tuples of the CEC operator; %s%n",
                mode, checkpoints.restored(), inFlight, checkpoints.summary());
        // REST reports the last of the three restores.
        checkpoints.assertRestoredUnalignedWithInFlightData();
        if (mode == CecMode.OPEN_ONLY) {
            assertThat(inFlight.remove(CecRecordKind.CHECK)).as("CHECK tuples of open-only mode").isZero();
        }
        assertThat(inFlight)
                .as("tuples of the CEC operator that the last restored checkpoint held in flight, per kind")
                .allSatisfy((kind, n) -> assertThat(n).as("%s tuples", kind).isPositive());
    }

    /**
     * Per kind, the tuples of the CEC operator that the slowed tasks of the last attempt received
     * beyond those its CEC subtasks emitted: the restored checkpoint held them in flight.
     */
    private static Map<CecRecordKind, Long> tuplesRestoredInFlight() {
        // Every failure restarts every task, but two failures in one attempt (one in a task that had not
        // yet been cancelled) restart it once: the last attempt is the newest one that received tuples.
        int last = TUPLES.keySet().stream()
                .filter(key -> key.startsWith("received:"))
                .mapToInt(key -> Integer.parseInt(key.split(":")[1]))
                .max()
                .orElse(0);
        assertThat(last).as("the last attempt that received tuples, after %d injected failures", FAILURES.get())
                .isBetween(1, FAILURES.get());
        Map<CecRecordKind, Long> inFlight = new TreeMap<>();
        for (CecRecordKind kind : CecRecordKind.values()) {
            inFlight.put(kind, tally("received", last, kind) - tally("emitted", last, kind));
        }
        return inFlight;
    }

    private static long tally(String where, int attempt, CecRecordKind kind) {
        LongAdder n = TUPLES.get(where + ":" + attempt + ":" + kind);
        return n == null ? 0 : n.sum();
    }

    /**
     * Restored windows get their accumulators from CHECK tuples, written with the job's serializers:
     * a Kryo serializer that the job registers after {@code aggregate()} must be used for them.
     */
    @ParameterizedTest
    @EnumSource(CecMode.class)
    void anAccumulatorThatNeedsARegisteredKryoSerializerIsRestored(CecMode mode) throws Exception {
        assertThat(TypeInformation.of(LongAdder.class)).isInstanceOf(GenericTypeInfo.class);
        persistedResultsAreExactlyOnce(mode, 11, new AdderCount(), new File(tmp, mode + "-kryo"), false);
    }

    /** Runs the job with three failures from {@code seed} and checks its persisted RESULTs; returns its id. */
    private static <ACC> JobID persistedResultsAreExactlyOnce(
            CecMode mode, long seed, AggregateFunction<Tuple2<String, Long>, ACC, Long> count, File dir,
            boolean unalignedUnderBackpressure) throws Exception {
        failureFreeRun();
        Random random = new Random(seed);
        PENDING_FAILURES.clear();
        FAILURES.set(0);
        RESULTS_SEEN.set(0);
        TUPLES.clear();
        PENDING_FAILURES.add("source:" + (2_000 + random.nextInt((int) EVENTS / 2)));
        PENDING_FAILURES.add("source:" + (EVENTS / 2 + random.nextInt((int) EVENTS / 2 - 2_000)));
        PENDING_FAILURES.add("result:" + (500 + random.nextInt(3_000)));

        Run<ACC> run = runJob(dir, mode, count, unalignedUnderBackpressure);

        assertThat(FAILURES.get()).as("injected failures that fired").isEqualTo(3);
        List<String> results = persistedResults(dir, run.type);
        assertThat(results).as("no duplicates").doesNotHaveDuplicates();
        assertThat(results).as("same results as the failure-free run").isEqualTo(failureFreeResults);
        // Restores continued the stream in new segment files; the failed attempts' files stay as they were.
        // An attempt that fails again while its CEC subtasks still restore (a task behind them can fail on
        // in-flight tuples of the restored checkpoint at once) opens no segment, so not every attempt has one.
        try (Stream<java.nio.file.Path> files = Files.walk(dir.toPath())) {
            long segments = files.filter(p -> p.getFileName().toString().endsWith(".log")).count();
            assertThat(segments).as("segments of 2 subtasks over at least 2 of the 4 attempts").isGreaterThanOrEqualTo(2 * 2);
        }
        return run.jobId;
    }

    /** A finished job and the type of its CEC operator's output. */
    private static final class Run<ACC> {
        final JobID jobId;
        final TypeInformation<CecRecord<String, TimeWindow, ACC, Long>> type;

        Run(JobID jobId, TypeInformation<CecRecord<String, TimeWindow, ACC, Long>> type) {
            this.jobId = jobId;
            this.type = type;
        }
    }

    /**
     * Runs the word count with {@code count}; {@code unalignedUnderBackpressure}: with unaligned
     * checkpoints, and the CEC operator's output sent over the network to slowed tasks.
     */
    private static <ACC> Run<ACC> runJob(
            File dir, CecMode mode, AggregateFunction<Tuple2<String, Long>, ACC, Long> count,
            boolean unalignedUnderBackpressure) throws Exception {
        Configuration config = new Configuration();
        if (unalignedUnderBackpressure) {
            config.set(CheckpointingOptions.ENABLE_UNALIGNED, true);
            config.set(CheckpointingOptions.ALIGNED_CHECKPOINT_TIMEOUT, Duration.ZERO);
        }
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(config);
        env.setParallelism(2);
        env.enableCheckpointing(150);
        env.setRestartStrategy(RestartStrategies.fixedDelayRestart(10, 50));
        DataStream<Tuple2<String, Long>> words =
                WordCountJob.words(env, EVENTS, WORDS, MILLIS_PER_EVENT, 15_000)
                        .map(new FailAtSourceIndex())
                        .setParallelism(1);
        DataStream<CecRecord<String, TimeWindow, ACC, Long>> counts =
                CecWindows.of(words.keyBy(w -> w.f0))
                        .window(WordCountJob.windows(Duration.ofSeconds(4), Duration.ofSeconds(1)))
                        .aggregate(
                                count,
                                CecOptions.builder(dir.toURI().toString())
                                        .mode(mode)
                                        .period(Duration.ofMillis(100))
                                        .slowThreshold(Duration.ofMillis(200))
                                        .maxWindowsPerShot(50)
                                        .build());
        DataStream<CecRecord<String, TimeWindow, ACC, Long>> forwarded = counts;
        if (unalignedUnderBackpressure) {
            // Tallied as the CEC subtasks emit them (chained to them), every tuple crosses the network to
            // tasks that tally them and sleep 1 ms after each (under 1 000 tuples a second each): well
            // under what the operator emits from the source's 15 000 events a second (about 4 700
            // tuples), so a backlog builds even when a loaded machine slows the operator down.
            forwarded =
                    counts.map(new Tally<>("emitted"))
                            .returns(counts.getType())
                            .name("tally emitted")
                            .rebalance()
                            .map(new Tally<>("received"))
                            .returns(counts.getType())
                            .name("tally received")
                            .map(new SlowDown<>(1, 1))
                            .returns(counts.getType())
                            .name("slow down");
        }
        CecWindows.results(forwarded).map(new FailAtResult<>()).addSink(new DiscardingSink<>());
        // After aggregate(): a job's serializer configuration is complete only when it is executed.
        registerAdderSerializer(env);
        JobID jobId = env.execute("cec word count with failures").getJobID();
        return new Run<>(jobId, counts.getType());
    }

    private static void registerAdderSerializer(StreamExecutionEnvironment env) {
        env.getConfig().getSerializerConfig().registerTypeWithKryoSerializer(LongAdder.class, JavaSerializer.class);
    }

    /** The RESULT tuples in the persisted stream ({@link CommittedResults}) as "key|window start|count", sorted. */
    private static <ACC> List<String> persistedResults(File dir, TypeInformation<CecRecord<String, TimeWindow, ACC, Long>> type)
            throws Exception {
        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setParallelism(2);
        registerAdderSerializer(reader);
        return CommittedResults.readDescribed(dir, type, reader).stream().sorted().collect(Collectors.toList());
    }

    private static void maybeFail(String point) {
        if (PENDING_FAILURES.remove(point)) {
            FAILURES.incrementAndGet();
            throw new RuntimeException("Injected failure at " + point);
        }
    }

    /** Fails when the event with a chosen generator index passes (event time = index * 3 ms). */
    static final class FailAtSourceIndex implements MapFunction<Tuple2<String, Long>, Tuple2<String, Long>> {
        @Override
        public Tuple2<String, Long> map(Tuple2<String, Long> e) {
            maybeFail("source:" + e.f1 / MILLIS_PER_EVENT);
            return e;
        }
    }

    /** Fails when the n-th result (counted over all attempts) passes, after the log write. */
    static final class FailAtResult<ACC> extends RichMapFunction<CecRecord<String, TimeWindow, ACC, Long>, String> {
        @Override
        public String map(CecRecord<String, TimeWindow, ACC, Long> r) {
            maybeFail("result:" + RESULTS_SEEN.incrementAndGet());
            return r.toString();
        }
    }

    /** Counts the tuples it passes in {@link #TUPLES}, per attempt and kind. */
    static final class Tally<R extends CecRecord<?, ?, ?, ?>> extends RichMapFunction<R, R> {
        private final String where;

        Tally(String where) {
            this.where = where;
        }

        @Override
        public R map(R r) {
            String key = where + ":" + getRuntimeContext().getTaskInfo().getAttemptNumber() + ":" + r.getKind();
            TUPLES.computeIfAbsent(key, k -> new LongAdder()).increment();
            return r;
        }
    }

    /**
     * Counts into a {@link LongAdder}. Kryo's default serializer would lose the count (the adder's
     * fields are transient), so the job registers Flink's Kryo {@link JavaSerializer} for it.
     */
    static final class AdderCount implements AggregateFunction<Tuple2<String, Long>, LongAdder, Long> {
        @Override
        public LongAdder createAccumulator() {
            return new LongAdder();
        }

        @Override
        public LongAdder add(Tuple2<String, Long> value, LongAdder acc) {
            acc.increment();
            return acc;
        }

        @Override
        public Long getResult(LongAdder acc) {
            return acc.sum();
        }

        @Override
        public LongAdder merge(LongAdder a, LongAdder b) {
            a.add(b.sum());
            return a;
        }
    }
}
