package org.appendlog.cec;

import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.cec.source.CecLogSource;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.functions.RichMapFunction;
import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.File;
import java.nio.file.Files;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
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
        runJob(dir);
        failureFreeResults = persistedResults(dir);
        // Every event lies in 4 sliding windows and every window fires by the end of input.
        long total = failureFreeResults.stream().mapToLong(l -> Long.parseLong(l.substring(l.lastIndexOf('|') + 1))).sum();
        assertThat(total).isEqualTo(EVENTS * 4);
    }

    @ParameterizedTest(name = "seed {0}")
    @ValueSource(longs = {11, 23, 37})
    void persistedResultsAreExactlyOnce(long seed) throws Exception {
        failureFreeRun();
        Random random = new Random(seed);
        PENDING_FAILURES.clear();
        FAILURES.set(0);
        RESULTS_SEEN.set(0);
        PENDING_FAILURES.add("source:" + (2_000 + random.nextInt((int) EVENTS / 2)));
        PENDING_FAILURES.add("source:" + (EVENTS / 2 + random.nextInt((int) EVENTS / 2 - 2_000)));
        PENDING_FAILURES.add("result:" + (500 + random.nextInt(3_000)));
        File dir = new File(tmp, "seed-" + seed);

        runJob(dir);

        assertThat(FAILURES.get()).as("injected failures that fired").isEqualTo(3);
        List<String> results = persistedResults(dir);
        assertThat(results).as("no duplicates").doesNotHaveDuplicates();
        assertThat(results).as("same results as the failure-free run").isEqualTo(failureFreeResults);
        // Each restore continued the stream in new segment files; the failed attempts' files stay as they were.
        try (Stream<java.nio.file.Path> files = Files.walk(dir.toPath())) {
            long segments = files.filter(p -> p.getFileName().toString().endsWith(".log")).count();
            assertThat(segments).as("segments of 2 subtasks over 4 attempts").isGreaterThanOrEqualTo(2 * 4);
        }
    }

    private static void runJob(File dir) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(150);
        env.setRestartStrategy(RestartStrategies.fixedDelayRestart(10, 50));
        DataStream<Tuple2<String, Long>> words =
                WordCountJob.words(env, EVENTS, WORDS, MILLIS_PER_EVENT, 15_000)
                        .map(new FailAtSourceIndex())
                        .setParallelism(1);
        DataStream<CecRecord<String, TimeWindow, Long, Long>> counts =
                WordCountJob.cecCounts(
                        words,
                        WordCountJob.windows(Duration.ofSeconds(4), Duration.ofSeconds(1)),
                        CecOptions.builder(dir.toURI().toString())
                                .period(Duration.ofMillis(100))
                                .slowThreshold(Duration.ofMillis(200))
                                .maxWindowsPerShot(50)
                                .build());
        CecWindows.results(counts).map(new FailAtResult()).addSink(new DiscardingSink<>());
        env.execute("cec word count with failures");
    }

    /** The RESULT tuples in the persisted stream, read back with {@link CecLogSource}, sorted. */
    private static List<String> persistedResults(File dir) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type =
                WordCountJob.cecCounts(
                                WordCountJob.words(env, 1, WORDS, MILLIS_PER_EVENT, 1),
                                WordCountJob.windows(Duration.ofSeconds(4), Duration.ofSeconds(1)),
                                CecOptions.builder(dir.toURI().toString()).build())
                        .getType();
        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setParallelism(2);
        List<String> results = new ArrayList<>();
        reader.fromSource(CecLogSource.of(dir.toURI().toString(), type, Long.MIN_VALUE), WatermarkStrategy.noWatermarks(), "history")
                .filter(CecRecord::isResult)
                .map((MapFunction<CecRecord<String, TimeWindow, Long, Long>, String>)
                        r -> r.getKey() + "|" + r.getWindow().getStart() + "|" + r.getValue())
                .executeAndCollect()
                .forEachRemaining(results::add);
        Collections.sort(results);
        return results;
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
    static final class FailAtResult extends RichMapFunction<CecRecord<String, TimeWindow, Long, Long>, String> {
        @Override
        public String map(CecRecord<String, TimeWindow, Long, Long> r) {
            maybeFail("result:" + RESULTS_SEEN.incrementAndGet());
            return r.toString();
        }
    }
}
