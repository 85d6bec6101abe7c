package org.appendlog.cec;

import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecWindows;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.typeutils.GenericTypeInfo;
import org.apache.flink.api.java.typeutils.runtime.kryo.JavaSerializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.LongAdder;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A windowed word count with failures injected at random points, before the CEC operator (in the
 * source's chain) and after it (while it forwards results). The RESULT tuples in the persisted
 * stream must equal those of a failure-free run: none lost, none duplicated.
 */
class CecExactlyOnceUnderFailuresTest {

    private static final long EVENTS = 40_000;
    private static final int WORDS = 40;
    private static final long MILLIS_PER_EVENT = 3;

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = CecMiniCluster.withFourSlots();

    @TempDir static File tmp;

    private static List<String> failureFreeResults;

    /** Failure points that have not fired yet: "source:<event index>" and "result:<n-th result>". */
    static final Set<String> PENDING_FAILURES = ConcurrentHashMap.newKeySet();
    static final AtomicInteger FAILURES = new AtomicInteger();
    static final AtomicInteger RESULTS_SEEN = new AtomicInteger();

    /** Runs once, on the shared MiniCluster (which is wired to the environment per test). */
    private static void failureFreeRun() throws Exception {
        if (failureFreeResults != null) {
            return;
        }
        PENDING_FAILURES.clear();
        File dir = new File(tmp, "baseline");
        failureFreeResults = persistedResults(dir, runJob(dir, new WordCountJob.Count()));
        // Every event lies in 4 sliding windows and every window fires by the end of input.
        long total = failureFreeResults.stream().mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf('|') + 1))).sum();
        assertThat(total).isEqualTo(EVENTS * 4);
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {11, 23, 37})
    void persistedResultsAreExactlyOnce(long seed) throws Exception {
        persistedResultsAreExactlyOnce(seed, new WordCountJob.Count(), new File(tmp, "seed-" + seed));
    }

    /**
     * Restored windows get their accumulators from CHECK tuples, written with the job's serializers:
     * a Kryo serializer that the job registers after {@code aggregate()} must be used for them.
     */
    @Test
    void anAccumulatorThatNeedsARegisteredKryoSerializerIsRestored() throws Exception {
        assertThat(TypeInformation.of(LongAdder.class)).isInstanceOf(GenericTypeInfo.class);
        persistedResultsAreExactlyOnce(11, new AdderCount(), new File(tmp, "kryo"));
    }

    private static <ACC> void persistedResultsAreExactlyOnce(
            long seed, AggregateFunction<Tuple2<String, Long>, ACC, Long> count, File dir) throws Exception {
        failureFreeRun();
        Random random = new Random(seed);
        PENDING_FAILURES.clear();
        FAILURES.set(0);
        RESULTS_SEEN.set(0);
        PENDING_FAILURES.add("source:" + (2_000 + random.nextInt((int) EVENTS / 2)));
        PENDING_FAILURES.add("source:" + (EVENTS / 2 + random.nextInt((int) EVENTS / 2 - 2_000)));
        PENDING_FAILURES.add("result:" + (500 + random.nextInt(3_000)));

        TypeInformation<CecRecord<String, TimeWindow, ACC, Long>> type = runJob(dir, count);

        assertThat(FAILURES.get()).as("injected failures that fired").isEqualTo(3);
        List<String> results = persistedResults(dir, type);
        assertThat(results).as("no duplicates").doesNotHaveDuplicates();
        assertThat(results).as("same results as the failure-free run").isEqualTo(failureFreeResults);
        // Each restore continued the stream in new segment files; the failed attempts' files stay as they were.
        try (Stream<java.nio.file.Path> files = Files.walk(dir.toPath())) {
            long segments = files.filter(p -> p.getFileName().toString().endsWith(".log")).count();
            assertThat(segments).as("segments of 2 subtasks over 4 attempts").isGreaterThanOrEqualTo(2 * 4);
        }
    }

    /** Runs the word count with {@code count}; returns the type of the CEC operator's output. */
    private static <ACC> TypeInformation<CecRecord<String, TimeWindow, ACC, Long>> runJob(
            File dir, AggregateFunction<Tuple2<String, Long>, ACC, Long> count) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
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
                                        .period(Duration.ofMillis(100))
                                        .slowThreshold(Duration.ofMillis(200))
                                        .maxWindowsPerShot(50)
                                        .build());
        CecWindows.results(counts).map(new FailAtResult<>()).addSink(new DiscardingSink<>());
        // After aggregate(): a job's serializer configuration is complete only when it is executed.
        registerAdderSerializer(env);
        env.execute("cec word count with failures");
        return counts.getType();
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
