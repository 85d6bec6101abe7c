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

package org.appendlog.cec.log;

import org.appendlog.cec.CecMiniCluster;
import org.appendlog.cec.CommittedResults;
import org.appendlog.cec.StreamFiles;
import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecConfigOptions;
import org.appendlog.cec.api.CecMode;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.statebackend.faults.ReliabilityLog;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.PrintWriter;
import java.io.StringWriter;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Log retention on a running CEC word count, which the operator applies after every completed
 * checkpoint: each subtask directory stays within {@code cec.log.retention.size}, a failure after
 * many deletions restores and the job's committed RESULTs from the earliest kept timestamp are
 * exactly the word counts, and a read from before that timestamp fails naming it. In every mode,
 * since each has its own recovery horizon.
 */
class CecLogRetentionTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("cec-log-retention-job");

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = CecMiniCluster.withFourSlots();

    static final long EVENTS = 20_000;
    static final int WORDS = 30;
    static final long MILLIS_PER_EVENT = 5;
    private static final long SEGMENT_BYTES = 8 << 10;
    private static final long RETENTION_BYTES = 64 << 10;
    private static final int DELETIONS_BEFORE_FAILURE = 10;
    // Paced per completed checkpoint, not per second: retention runs after each checkpoint, so what
    // the log may hold beyond its bound is what arrives between two of them, however slow they are.
    private static final int EVENTS_PER_CHECKPOINT = 200;

    static final AtomicInteger DELETED = new AtomicInteger();
    static final AtomicInteger FAILURES = new AtomicInteger();

    @TempDir File tmp;

    @ParameterizedTest
    @EnumSource(CecMode.class)
    void aLongRunStaysWithinTheRetentionSizeAndRestoresAfterDeletions(CecMode mode) throws Exception {
        DELETED.set(0);
        FAILURES.set(0);
        File dir = new File(tmp, "stream-" + mode);
        CecOptions options = options(dir.toURI().toString()).mode(mode).build();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(100);
        env.setRestartStrategy(RestartStrategies.fixedDelayRestart(3, 100));
        DataStream<Tuple2<String, Long>> words =
                WordCountJob.words(
                                env, EVENTS, WORDS, MILLIS_PER_EVENT,
                                RateLimiterStrategy.perCheckpoint(EVENTS_PER_CHECKPOINT), false)
                        .map(new FailAfterDeletions())
                        .setParallelism(1);
        DataStream<CecRecord<String, TimeWindow, Long, Long>> counts =
                WordCountJob.cecCounts(words, WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1)), options);
        TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type = counts.getType();
        counts.addSink(new DiscardingSink<>());

        long start = System.nanoTime();
        JobClient job = env.executeAsync("cec word count with retention, " + mode);
        Set<String> segmentsSeen = new HashSet<>();
        Map<String, Long> maxBytes = new TreeMap<>();
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path root = new Path(dir.toURI());
        boolean running = true;
        while (running) {
            running = !job.getJobStatus().get().isGloballyTerminalState();
            if (!fs.exists(root)) {
                continue;
            }
            int present = 0;
            for (Path subtask : PersistedStream.subtaskDirectories(fs, root)) {
                for (String segment : StreamFiles.segments(subtask)) {
                    segmentsSeen.add(subtask.getName() + "/" + segment);
                    present++;
                }
                maxBytes.merge(subtask.getName(), StreamFiles.bytes(subtask), Math::max);
            }
            DELETED.set(segmentsSeen.size() - present);
            Thread.sleep(20);
        }
        job.getJobExecutionResult().get();
        double seconds = (System.nanoTime() - start) / 1e9;

        long earliest = Long.MIN_VALUE;
        long earliestOfAny = Long.MAX_VALUE;
        for (Path subtask : PersistedStream.subtaskDirectories(fs, root)) {
            long e = LogStart.read(fs, subtask).orElseThrow().earliestTimestamp();
            earliest = Math.max(earliest, e);
            earliestOfAny = Math.min(earliestOfAny, e);
        }
        System.out.printf(
                "retention: %d segments deleted in %.1f s, largest directory bytes %s (bound %d), earliest kept t=%d%n",
                DELETED.get(), seconds, maxBytes, RETENTION_BYTES, earliest);

        assertThat(FAILURES.get()).as("failures injected after %d deletions", DELETIONS_BEFORE_FAILURE).isEqualTo(1);
        assertThat(DELETED.get() * SEGMENT_BYTES).as("bytes deleted").isGreaterThan(4 * RETENTION_BYTES);
        assertThat(maxBytes).hasSize(2);
        // Sampled at any time: retention runs after each checkpoint, the writer appends meanwhile, and
        // the horizon keeps the segments since the oldest footprint of an open window (a few KiB here).
        assertThat(maxBytes.values()).allSatisfy(b -> assertThat(b).isLessThanOrEqualTo(RETENTION_BYTES + 3 * SEGMENT_BYTES));

        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setParallelism(2);
        assertThat(CommittedResults.readDescribed(dir, type, reader, earliest).stream().sorted().collect(Collectors.toList()))
                .as("committed RESULTs from t=%d", earliest)
                .isEqualTo(expectedResults(earliest));

        long before = earliestOfAny - 1;
        Throwable failure = catchRead(dir, type, before, reader);
        String trace = stackTrace(failure);
        List<String> named = new ArrayList<>();
        for (Path subtask : PersistedStream.subtaskDirectories(fs, root)) {
            named.add(subtask.getName() + " from t=" + before + ": log retention");
        }
        assertThat(trace).contains("cannot read").containsAnyOf(named.toArray(new String[0]));
        assertThat(trace).containsAnyOf(
                "earliest timestamp still available there is " + earliestOfAny,
                "earliest timestamp still available there is " + earliest);
        RELIABILITY.record(
                mode + " mode: job fails after retention deleted " + DELETIONS_BEFORE_FAILURE + " segments",
                "restored; committed RESULTs from the earliest kept timestamp equal the word counts");
        RELIABILITY.record(
                mode + " mode: bounded read from 1 ms before the earliest kept timestamp",
                "fails: " + trace.lines().filter(l -> l.contains("cannot read")).findFirst().orElseThrow()
                        .replaceFirst("^.*?CecLogSource", "CecLogSource"));
    }

    /** A short CEC policy, {@link #SEGMENT_BYTES} segments and {@link #RETENTION_BYTES} of retention. */
    static CecOptions.Builder options(String logPath) {
        return CecOptions.builder(logPath)
                .period(Duration.ofMillis(50))
                .slowThreshold(Duration.ofMillis(100))
                .retentionSize(new MemorySize(RETENTION_BYTES))
                .set(CecConfigOptions.LOG_SEGMENT_SIZE, new MemorySize(SEGMENT_BYTES))
                .set(CecConfigOptions.LOG_INDEX_INTERVAL, MemorySize.parse("512b"));
    }

    private static Throwable catchRead(
            File dir, TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type, long from, StreamExecutionEnvironment env) {
        try {
            CommittedResults.readDescribed(dir, type, env, from);
        } catch (Exception e) {
            return e;
        }
        throw new AssertionError("a read from t=" + from + " succeeded");
    }

    private static String stackTrace(Throwable e) {
        StringWriter out = new StringWriter();
        e.printStackTrace(new PrintWriter(out));
        return out.toString();
    }

    /** The word counts of the sliding 2 s / 1 s windows whose RESULT (at the window's end) is at or after {@code from}. */
    static List<String> expectedResults(long from) {
        Map<String, Long> counts = new HashMap<>();
        for (long i = 0; i < EVENTS; i++) {
            Tuple2<String, Long> event = WordCountJob.event(i, WORDS, MILLIS_PER_EVENT);
            long lastStart = event.f1 - event.f1 % 1000;
            for (long windowStart = lastStart; windowStart > event.f1 - 2000; windowStart -= 1000) {
                if (windowStart + 2000 - 1 >= from) {
                    counts.merge(event.f0 + "|" + windowStart, 1L, Long::sum);
                }
            }
        }
        return counts.entrySet().stream().map(e -> e.getKey() + "|" + e.getValue()).sorted().collect(Collectors.toList());
    }

    /** Fails the job once, after retention deleted {@link #DELETIONS_BEFORE_FAILURE} segments. */
    static final class FailAfterDeletions implements MapFunction<Tuple2<String, Long>, Tuple2<String, Long>> {
        @Override
        public Tuple2<String, Long> map(Tuple2<String, Long> event) {
            if (DELETED.get() >= DELETIONS_BEFORE_FAILURE && FAILURES.compareAndSet(0, 1)) {
                throw new RuntimeException("Injected failure after " + DELETED.get() + " deleted segments");
            }
            return event;
        }
    }
}
