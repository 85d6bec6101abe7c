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
import org.appendlog.cec.StreamFiles;
import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecConfigOptions;
import org.appendlog.cec.api.CecMode;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecWindowedStream;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.cec.log.CommitMarker;
import org.appendlog.cec.log.LogStart;
import org.appendlog.cec.log.LogWriter;
import org.appendlog.cec.log.PersistedStream;
import org.appendlog.cec.source.CecLogSource;
import org.appendlog.statebackend.faults.ReliabilityLog;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.api.common.eventtime.Watermark;
import org.apache.flink.api.common.eventtime.WatermarkGenerator;
import org.apache.flink.api.common.eventtime.WatermarkOutput;
import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.groups.OperatorMetricGroup;
import org.apache.flink.runtime.testutils.InMemoryReporter;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.WindowedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;
import org.apache.flink.streaming.api.functions.windowing.ProcessWindowFunction;
import org.apache.flink.streaming.api.windowing.assigners.SlidingEventTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.TumblingProcessingTimeWindows;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.test.junit5.MiniClusterExtension;
import org.apache.flink.util.Collector;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.EnumSource;
import org.junit.jupiter.params.provider.MethodSource;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.attribute.BasicFileAttributes;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Map;
import java.util.Optional;
import java.util.Queue;
import java.util.TreeMap;
import java.util.concurrent.ConcurrentLinkedQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Restores at another parallelism: a job runs at parallelism 2 with retained checkpoints and is
 * cancelled, restored at 3 from the retained checkpoint, stopped with a savepoint and restored at 1
 * to the end of its bounded input, failing once on the way. The persisted stream's whole history, read with {@link
 * org.appendlog.cec.source.CecLogSource}, must hold exactly the RESULTs of Flink's {@code
 * WindowOperator} on the same input. Then the retained parallelism-2 checkpoint is restored again
 * after the rescaled runs: the history again holds each RESULT once, the later generations withdrawn.
 * The same holds with a mode change at each rescale. Processing-time windows, whose RESULTs depend on
 * the wall clock, must count each input event exactly once instead. With a retention in the last
 * run of 2 -> 3 -> 1, the streams of both earlier generations shrink to the segments from their
 * committed end on.
 */
class CecRescaleTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("cec-rescale");

    private static final long EVENTS = 6_000;
    private static final int WORDS = 40;
    private static final long MILLIS_PER_EVENT = 5;
    /** Events per second of the runs that are stopped: slow enough that none reaches the end first. */
    private static final double PACED = 1_000;
    private static final int COUNT_WINDOW = 7;
    private static final int FAIL_AT_RESULT = 200;
    /** What {@link #twoToThreeToOne} does, as the reliability rows name it. */
    private static final String SEQUENCE =
            "parallelism 2, cancelled, its retained checkpoint restored at 3, stopped with a savepoint, restored at 1, "
                    + "which fails once after its " + FAIL_AT_RESULT + "th RESULT";
    /**
     * Events generated after the input for processing-time windows and dropped before them: they
     * keep the job running for three seconds of wall clock after its last event, so that its
     * windows fire (processing-time windows still open when the input ends never fire) even when a
     * loaded machine lets the operator fall a second or two behind the paced source.
     */
    private static final long PROCESSING_TIME_TAIL = 3_000;
    /** Short against the input's 30 s of event time, long against the last run's final windows. */
    private static final Duration RETENTION = Duration.ofSeconds(2);

    private static final InMemoryReporter REPORTER = InMemoryReporter.createWithRetainedMetrics();

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = CecMiniCluster.withFourSlots(clusterConfiguration());

    private static Configuration clusterConfiguration() {
        Configuration config = REPORTER.addToConfiguration(new Configuration());
        // Every checkpoint of a run, so that a test can also go back to an earlier one.
        config.set(CheckpointingOptions.MAX_RETAINED_CHECKPOINTS, 100);
        return config;
    }

    /** RESULTs forwarded by a run that fails once ({@link FailOnce}), over its attempts. */
    static final AtomicInteger RESULTS_FORWARDED = new AtomicInteger();
    static final AtomicInteger FAILURES = new AtomicInteger();
    /** What the live reader returned. */
    static final Queue<String> FOLLOWED = new ConcurrentLinkedQueue<>();

    @TempDir File tmp;

    enum Windows {
        SLIDING_EVENT_TIME,
        COUNT,
        /** 200 ms windows, on an input paced in every run. */
        TUMBLING_PROCESSING_TIME
    }

    static Stream<Arguments> cases() {
        return Stream.of(
                Arguments.of(Windows.SLIDING_EVENT_TIME, CecMode.EVENTUAL),
                Arguments.of(Windows.COUNT, CecMode.EVENTUAL),
                Arguments.of(Windows.SLIDING_EVENT_TIME, CecMode.OPEN_ONLY),
                Arguments.of(Windows.SLIDING_EVENT_TIME, CecMode.BARRIER),
                Arguments.of(Windows.COUNT, CecMode.BARRIER));
    }

    @ParameterizedTest(name = "{0}, {1}")
    @MethodSource("cases")
    void twoToThreeToOneEqualsWindowOperatorAndTheOldCheckpointStillRestores(Windows windows, CecMode mode)
            throws Exception {
        File dir = new File(tmp, "stream");
        Path root = new Path(dir.toURI());
        List<String> expected = windowOperatorResults(windows);
        Rescaled rescaled = twoToThreeToOneEqualsWindowOperator(windows, dir, expected, mode, mode, mode);

        // The retained checkpoint of parallelism 2 again: its own streams go on, the rescaled ones are withdrawn.
        Map<String, Boolean> streams = committedStreams(root);
        streams.replaceAll((name, c) -> !name.contains("-gen-"));
        StreamExecutionEnvironment again =
                CecMiniCluster.environment(2, restoreFrom(rescaled.retained.toURI().toString()));
        job(again, windows, mode, dir, 0);
        again.execute("parallelism 2 again");
        assertThat(committedStreams(root)).as("the streams after restoring the parallelism-2 checkpoint again, "
                + "committed or withdrawn").isEqualTo(streams);
        assertThat(history(dir, rescaled.type, windows)).as("RESULTs after restoring the parallelism-2 checkpoint again")
                .containsExactlyInAnyOrderElementsOf(expected);
        RELIABILITY.record(
                describe(windows, mode, mode, mode) + ": then the retained parallelism-2 checkpoint restored again",
                "restored; the 4 streams of the two later generations withdrawn; the history again holds exactly "
                        + "WindowOperator's " + expected.size() + " RESULTs");
    }

    /**
     * Processing-time windows fire by the wall clock, so no other run has the same RESULTs. Each
     * input event must be counted once instead: no window of a word has two RESULTs, and the counts
     * of a word's RESULTs add up to its number of input events.
     */
    @ParameterizedTest(name = "{0}")
    @EnumSource(value = CecMode.class, names = {"EVENTUAL", "BARRIER"})
    void processingTimeWindowsCountEachEventOnceAcrossTwoToThreeToOne(CecMode mode) throws Exception {
        File dir = new File(tmp, "stream");
        Rescaled rescaled = twoToThreeToOne(Windows.TUMBLING_PROCESSING_TIME, dir, mode, mode, mode);

        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setParallelism(2);
        List<CecRecord<String, Window, Long, Long>> results = CommittedResults.read(dir, rescaled.type, reader);
        assertThat(results.stream().map(r -> r.getKey() + "|" + r.getWindow()))
                .as("the word and window of each RESULT in the history after 2 -> 3 -> 1")
                .doesNotHaveDuplicates();
        Map<String, Long> counted = results.stream()
                .collect(Collectors.groupingBy(CecRecord::getKey, TreeMap::new, Collectors.summingLong(CecRecord::getValue)));
        Map<String, Long> events = eventsPerWord();
        assertThat(counted).as("per word, the RESULT counts added up, against its input events").isEqualTo(events);
        long fired = results.stream().map(CecRecord::getWindow).distinct().count();
        assertThat(fired).as("200 ms windows that fired over the paced input of the three runs").isGreaterThan(20);
        System.out.printf(
                "2 -> 3 -> 1 (%s): %d RESULTs of %d windows count the %d events%n",
                describe(Windows.TUMBLING_PROCESSING_TIME, mode, mode, mode), results.size(), fired, EVENTS);
        RELIABILITY.record(
                describe(Windows.TUMBLING_PROCESSING_TIME, mode, mode, mode) + ", paced input: " + SEQUENCE,
                "no word's window has two RESULTs in the history; each of the " + events.size()
                        + " words' RESULT counts add up to its number of input events (" + EVENTS + " in all)");
    }

    /**
     * Each rescale also changes the mode: the restores read the old streams as the checkpoint's
     * mode wrote them (with or without the input) and go on in their own.
     */
    @ParameterizedTest(name = "{0}, {1} at 2, {2} at 3, {3} at 1")
    @MethodSource("modeChanges")
    void aModeChangeWithEachRescaleEqualsWindowOperator(Windows windows, CecMode two, CecMode three, CecMode one)
            throws Exception {
        twoToThreeToOneEqualsWindowOperator(
                windows, new File(tmp, "stream"), windowOperatorResults(windows), two, three, one);
    }

    static Stream<Arguments> modeChanges() {
        return Stream.of(
                Arguments.of(Windows.SLIDING_EVENT_TIME, CecMode.BARRIER, CecMode.EVENTUAL, CecMode.BARRIER),
                Arguments.of(Windows.SLIDING_EVENT_TIME, CecMode.OPEN_ONLY, CecMode.BARRIER, CecMode.EVENTUAL),
                Arguments.of(Windows.COUNT, CecMode.EVENTUAL, CecMode.BARRIER, CecMode.EVENTUAL));
    }

    /** What a 2 -> 3 -> 1 sequence left: the retained parallelism-2 checkpoint, and the operator's output type. */
    private static final class Rescaled {
        final File retained;
        final TypeInformation<CecRecord<String, Window, Long, Long>> type;

        Rescaled(File retained, TypeInformation<CecRecord<String, Window, Long, Long>> type) {
            this.retained = retained;
            this.type = type;
        }
    }

    /** {@link #twoToThreeToOne}, whose history must then hold exactly {@code expected}, WindowOperator's RESULTs. */
    private Rescaled twoToThreeToOneEqualsWindowOperator(
            Windows windows, File dir, List<String> expected, CecMode two, CecMode three, CecMode one) throws Exception {
        Rescaled rescaled = twoToThreeToOne(windows, dir, two, three, one);
        assertThat(history(dir, rescaled.type, windows)).as("RESULTs after 2 -> 3 -> 1")
                .containsExactlyInAnyOrderElementsOf(expected);
        RELIABILITY.record(
                describe(windows, two, three, one) + ": " + SEQUENCE,
                "the history read with CecLogSource holds exactly WindowOperator's " + expected.size() + " RESULTs");
        return rescaled;
    }

    /**
     * Runs the job at parallelism 2 in mode {@code two} and cancels it, restores its retained
     * checkpoint at 3 in mode {@code three} and stops that with a savepoint, restores the savepoint at
     * 1 in mode {@code one} to the end of the input, failing once; checks what the restores at 3 read
     * and that the six streams of the three generations are committed.
     */
    private Rescaled twoToThreeToOne(Windows windows, File dir, CecMode two, CecMode three, CecMode one)
            throws Exception {
        Path root = new Path(dir.toURI());
        File retained = runAndCancel(windows, two, dir);
        long checkpoint = checkpointIdOf(retained);

        StreamExecutionEnvironment rescaled = CecMiniCluster.environment(3, restoreFrom(retained.toURI().toString()));
        job(rescaled, windows, three, dir, PACED);
        JobClient threeRunning = rescaled.executeAsync("parallelism 3");
        awaitCommitAfter(PersistedStream.subtaskDirectory(root, checkpoint, 0), checkpoint);
        String savepoint =
                threeRunning.stopWithSavepoint(
                                false, new File(tmp, "savepoints").toURI().toString(), SavepointFormatType.CANONICAL)
                        .get();
        List<Long> scanned = restoreCost(threeRunning.getJobID(), CecMetrics.RECOVERY_RECORDS_SCANNED);
        System.out.printf(
                "rescale 2 -> 3 (%s): each new subtask read %s log records, replayed %s inputs, in %s ms%n",
                describe(windows, two, three, one), scanned,
                restoreCost(threeRunning.getJobID(), CecMetrics.REPLAY_RECORDS),
                restoreCost(threeRunning.getJobID(), CecMetrics.RECOVERY_MILLIS));
        assertThat(scanned).as("records read by the restores of the three new subtasks: both old streams' ranges")
                .hasSize(3)
                .containsOnly(scanned.get(0));
        assertThat(scanned.get(0)).isPositive();

        StreamExecutionEnvironment single = CecMiniCluster.environment(1, restoreFrom(savepoint));
        single.setRestartStrategy(RestartStrategies.fixedDelayRestart(1, 100));
        RESULTS_FORWARDED.set(0);
        FAILURES.set(0);
        // Processing-time windows fire only as the wall clock passes: their input stays paced to the end.
        double pace = windows == Windows.TUMBLING_PROCESSING_TIME ? PACED : 0;
        TypeInformation<CecRecord<String, Window, Long, Long>> type = job(single, windows, one, dir, pace, FAIL_AT_RESULT);
        single.execute("parallelism 1");
        assertThat(FAILURES.get()).as("failures of the parallelism-1 run").isEqualTo(1);

        Map<String, Boolean> committed = committedStreams(root);
        long lastGeneration = savepointGeneration(committed.keySet(), checkpoint);
        Map<String, Boolean> streams = new TreeMap<>();
        for (String name : new String[] {"subtask-0000", "subtask-0001", "subtask-0000-gen-" + checkpoint,
                "subtask-0001-gen-" + checkpoint, "subtask-0002-gen-" + checkpoint, "subtask-0000-gen-" + lastGeneration}) {
            streams.put(name, true);
        }
        assertThat(committed).as("the streams after 2 -> 3 -> 1, each committed").isEqualTo(streams);
        return new Rescaled(retained, type);
    }

    /**
     * Back to a later checkpoint of the old parallelism after a rescale had branched off an earlier
     * one: that branch's generation is not in the restored state's lineage, so the restore withdraws
     * its streams, though the branch started before the restored checkpoint.
     */
    @Test
    void goingBackPastARescaledBranchWithdrawsThatBranch() throws Exception {
        File dir = new File(tmp, "stream");
        Path root = new Path(dir.toURI());
        List<String> expected = windowOperatorResults(Windows.SLIDING_EVENT_TIME);
        runAndCancel(Windows.SLIDING_EVENT_TIME, CecMode.EVENTUAL, dir);
        List<File> retained = retainedCheckpoints(new File(tmp, "checkpoints"));
        File earlier = retained.get(0);
        File later = retained.get(retained.size() - 1);
        long branchedAt = checkpointIdOf(earlier);
        assertThat(branchedAt).as("the earlier retained checkpoint").isLessThan(checkpointIdOf(later));

        StreamExecutionEnvironment branch = CecMiniCluster.environment(3, restoreFrom(earlier.toURI().toString()));
        job(branch, Windows.SLIDING_EVENT_TIME, CecMode.EVENTUAL, dir, PACED);
        JobClient branchRunning = branch.executeAsync("branch at parallelism 3");
        awaitCommitAfter(PersistedStream.subtaskDirectory(root, branchedAt, 0), branchedAt + 2);
        branchRunning.cancel().get();
        while (!branchRunning.getJobStatus().get().isGloballyTerminalState()) {
            Thread.sleep(20);
        }
        Map<String, Boolean> streams = new TreeMap<>();
        for (String name : new String[] {"subtask-0000", "subtask-0001", "subtask-0000-gen-" + branchedAt,
                "subtask-0001-gen-" + branchedAt, "subtask-0002-gen-" + branchedAt}) {
            streams.put(name, true);
        }
        assertThat(committedStreams(root)).as("the streams after the branch at parallelism 3").isEqualTo(streams);

        StreamExecutionEnvironment back = CecMiniCluster.environment(2, restoreFrom(later.toURI().toString()));
        TypeInformation<CecRecord<String, Window, Long, Long>> type =
                job(back, Windows.SLIDING_EVENT_TIME, CecMode.EVENTUAL, dir, 0);
        back.execute("back to the later parallelism-2 checkpoint");
        streams.replaceAll((name, committed) -> !name.contains("-gen-"));
        assertThat(committedStreams(root)).as("the streams after going back past the branch, committed or withdrawn")
                .isEqualTo(streams);
        assertThat(history(dir, type, Windows.SLIDING_EVENT_TIME)).as("RESULTs after going back past the branch")
                .containsExactlyInAnyOrderElementsOf(expected);
        RELIABILITY.record(
                "eventual, sliding event-time windows: parallelism 2 cancelled; its earlier retained checkpoint "
                        + "restored at 3 and cancelled after commits; its later retained checkpoint restored at 2",
                "the 3 streams of the abandoned parallelism-3 branch withdrawn; the history holds exactly "
                        + "WindowOperator's " + expected.size() + " RESULTs");
    }

    @Test
    void aLiveReaderFollowsTheNewGenerationAndFailsOnceItsStreamIsWithdrawn() throws Exception {
        File dir = new File(tmp, "stream");
        List<String> expected = windowOperatorResults(Windows.SLIDING_EVENT_TIME);
        TypeInformation<CecRecord<String, Window, Long, Long>> type =
                job(StreamExecutionEnvironment.getExecutionEnvironment(), Windows.SLIDING_EVENT_TIME, CecMode.EVENTUAL,
                        dir, 0);
        StreamExecutionEnvironment follower = StreamExecutionEnvironment.getExecutionEnvironment();
        follower.setParallelism(1); // the writer at parallelism 3 takes the other three slots
        follower.setRestartStrategy(RestartStrategies.noRestart());
        follower.fromSource(CecLogSource.following(dir.toURI().toString(), type, Long.MIN_VALUE),
                        WatermarkStrategy.noWatermarks(), "live")
                .filter(CecRecord::isResult)
                .map(r -> describe(r.getKey(), r.getWindow(), r.getValue(), r.getTimestamp()))
                .returns(String.class)
                .addSink(new Follow());
        FOLLOWED.clear();
        JobClient reading = follower.executeAsync("follow");

        File retained = runAndCancel(Windows.SLIDING_EVENT_TIME, CecMode.EVENTUAL, dir);
        StreamExecutionEnvironment three = CecMiniCluster.environment(3, restoreFrom(retained.toURI().toString()));
        job(three, Windows.SLIDING_EVENT_TIME, CecMode.EVENTUAL, dir, 0);
        three.execute("parallelism 3");
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (FOLLOWED.size() < expected.size() && System.nanoTime() < deadline) {
            Thread.sleep(100);
        }
        // Anything the reader would return twice would come now: several polls (100 ms) and discoveries (500 ms).
        Thread.sleep(1_500);
        assertThat(new ArrayList<>(FOLLOWED)).as("RESULTs the live reader returned across 2 -> 3")
                .containsExactlyInAnyOrderElementsOf(expected);

        StreamExecutionEnvironment again = CecMiniCluster.environment(2, restoreFrom(retained.toURI().toString()));
        job(again, Windows.SLIDING_EVENT_TIME, CecMode.EVENTUAL, dir, 0);
        again.execute("parallelism 2 again");
        assertThatThrownBy(() -> reading.getJobExecutionResult().get(120, TimeUnit.SECONDS))
                .as(() -> "the live reader's failure (streams committed: " + committedStreamsOrError(new Path(dir.toURI()))
                        + "; threads of the reading job: " + stacksOfThreadsNaming("Source: live") + ")")
                .hasStackTraceContaining("-gen-" + checkpointIdOf(retained) + " was withdrawn after this reader read it");
        RELIABILITY.record(
                "a live reader while the job goes 2 -> 3, then the retained parallelism-2 checkpoint restored again",
                "the reader found the new generation's streams and returned exactly WindowOperator's " + expected.size()
                        + " RESULTs; after the restore it failed, naming a withdrawn stream");
    }

    @Test
    void aRestoreWithAnotherMaxParallelismFailsNamingBothAndLeavesThePathAsItWas() throws Exception {
        File dir = new File(tmp, "stream");
        File retained = runAndCancel(Windows.SLIDING_EVENT_TIME, CecMode.EVENTUAL, dir);
        Map<String, Long> before = listing(dir);

        StreamExecutionEnvironment refused = CecMiniCluster.environment(3, restoreFrom(retained.toURI().toString()));
        refused.setMaxParallelism(64);
        job(refused, Windows.SLIDING_EVENT_TIME, CecMode.EVENTUAL, dir, 0);
        assertThatThrownBy(() -> refused.execute("max parallelism 64"))
                .hasStackTraceContaining("with max parallelism 128 to new program with max parallelism 64");
        assertThat(listing(dir)).as("the log path after the refused restore").isEqualTo(before);
        RELIABILITY.record(
                "a checkpoint of max parallelism 128 restored with max parallelism 64",
                "refused by Flink before any task runs, naming both values (\"... with max parallelism 128 to new "
                        + "program with max parallelism 64\"); the log path unchanged");
    }

    /**
     * 2 -> 3 -> 1, where only the parallelism-1 run has a retention: it prunes the streams of both
     * earlier generations, those of parallelism 2 through the positions the parallelism-3 run handed
     * on, to the segment of their committed end, and the history from the earliest kept timestamp
     * is still exactly WindowOperator's.
     */
    @Test
    void retentionPrunesTheStreamsOfEarlierGenerationsAcrossTwoRescales() throws Exception {
        long started = System.nanoTime();
        File dir = new File(tmp, "stream");
        Path root = new Path(dir.toURI());
        FileSystem fs = FileSystem.getLocalFileSystem();
        CecOptions.Builder options =
                options(dir, CecMode.EVENTUAL)
                        .set(CecConfigOptions.LOG_SEGMENT_SIZE, MemorySize.parse("16kb"))
                        .set(CecConfigOptions.LOG_INDEX_INTERVAL, MemorySize.parse("1kb"));
        File retained = runAndCancel(Windows.SLIDING_EVENT_TIME, options.build(), dir, true);
        long checkpoint = checkpointIdOf(retained);

        StreamExecutionEnvironment three = CecMiniCluster.environment(3, restoreFrom(retained.toURI().toString()));
        job(three, Windows.SLIDING_EVENT_TIME, options.build(), PACED, 0, true);
        JobClient threeRunning = three.executeAsync("parallelism 3");
        // Something for the retention to prune in every new stream too: a commit past its first segment.
        for (int subtask = 0; subtask < 3; subtask++) {
            awaitCommitPastFirstSegment(PersistedStream.subtaskDirectory(root, checkpoint, subtask));
        }
        String savepoint =
                threeRunning.stopWithSavepoint(
                                false, new File(tmp, "savepoints").toURI().toString(), SavepointFormatType.CANONICAL)
                        .get();
        Map<String, List<String>> before = new TreeMap<>();
        Map<String, Long> bytesBefore = new TreeMap<>();
        for (Path stream : PersistedStream.subtaskDirectories(fs, root)) {
            before.put(stream.getName(), StreamFiles.segments(stream));
            bytesBefore.put(stream.getName(), StreamFiles.bytes(stream));
        }
        assertThat(before).as("the streams of parallelism 2 and 3").hasSize(5);

        StreamExecutionEnvironment one = CecMiniCluster.environment(1, restoreFrom(savepoint));
        TypeInformation<CecRecord<String, Window, Long, Long>> type =
                job(one, Windows.SLIDING_EVENT_TIME, options.retentionTime(RETENTION).build(), 0, 0, true);
        one.execute("parallelism 1 with retention");

        Map<String, Long> bytesAfter = new TreeMap<>();
        long earliest = Long.MIN_VALUE;
        for (Path stream : PersistedStream.subtaskDirectories(fs, root)) {
            Optional<LogStart> start = LogStart.read(fs, stream);
            earliest = Math.max(earliest, start.map(LogStart::earliestTimestamp).orElse(Long.MIN_VALUE));
            List<String> segmentsBefore = before.get(stream.getName());
            if (segmentsBefore == null) {
                continue; // the parallelism-1 run's own stream
            }
            long end = LogWriter.sequenceOf(PersistedStream.latestCommit(fs, stream).orElseThrow().end().segment());
            assertThat(segmentsBefore).as("segments of %s before its committed end's, before the run", stream.getName())
                    .anyMatch(segment -> LogWriter.sequenceOf(segment) < end);
            assertThat(StreamFiles.segments(stream)).as("segments of %s after the run with retention", stream.getName())
                    .isEqualTo(segmentsBefore.stream().filter(segment -> LogWriter.sequenceOf(segment) >= end)
                            .collect(Collectors.toList()));
            bytesAfter.put(stream.getName(), StreamFiles.bytes(stream));
        }
        long from = earliest;
        List<String> expected = windowOperatorResults(Windows.SLIDING_EVENT_TIME).stream()
                .filter(result -> Long.parseLong(result.substring(result.lastIndexOf('|') + 1)) >= from)
                .collect(Collectors.toList());
        assertThat(expected).as("WindowOperator's RESULTs from t=%d", from).hasSizeGreaterThan(100);
        assertThat(history(dir, type, Windows.SLIDING_EVENT_TIME, from)).as("RESULTs from t=%d", from)
                .containsExactlyInAnyOrderElementsOf(expected);
        System.out.printf(
                "old streams pruned by retention: bytes before %s, after %s; history from t=%d; %.1f s%n",
                bytesBefore, bytesAfter, from, (System.nanoTime() - started) / 1e9);
        RELIABILITY.record(
                "sliding event-time windows, EVENTUAL mode: parallelism 2 cancelled, restored at 3, stopped with a "
                        + "savepoint, restored at 1 with cec.log.retention.time " + RETENTION.toSeconds() + " s",
                "the 5 streams of parallelism 2 and 3 pruned to the segment of their committed end; the history from "
                        + "the earliest kept timestamp holds exactly WindowOperator's RESULTs from there");
    }

    /** Per subtask of the CEC operator of {@code job}, the value of a restore metric. */
    private static List<Long> restoreCost(JobID job, String metric) {
        List<Long> values = new ArrayList<>();
        for (OperatorMetricGroup group : REPORTER.findOperatorMetricGroups(job, "cec")) {
            values.add((Long) ((Gauge<?>) REPORTER.getMetricsByGroup(group).get(metric)).getValue());
        }
        return values;
    }

    /** Fails the job once, when it forwards its {@code failAt}-th RESULT (0: never). */
    static final class FailOnce implements MapFunction<CecRecord<String, Window, Long, Long>, String> {
        private final int failAt;

        FailOnce(int failAt) {
            this.failAt = failAt;
        }

        @Override
        public String map(CecRecord<String, Window, Long, Long> record) {
            if (failAt > 0 && record.isResult() && RESULTS_FORWARDED.incrementAndGet() == failAt
                    && FAILURES.compareAndSet(0, 1)) {
                throw new RuntimeException("Injected failure at RESULT " + failAt);
            }
            return "";
        }
    }

    /**
     * A watermark after each event: records written before the first watermark have no age for the
     * retention time, and this keeps them to the first event's.
     */
    static final class WatermarkPerEvent implements WatermarkGenerator<Tuple2<String, Long>> {
        @Override
        public void onEvent(Tuple2<String, Long> event, long timestamp, WatermarkOutput output) {
            output.emitWatermark(new Watermark(timestamp - 1));
        }

        @Override
        public void onPeriodicEmit(WatermarkOutput output) {}
    }

    /** Collects what the live reader returned. */
    static final class Follow implements SinkFunction<String> {
        @Override
        public void invoke(String value, Context context) {
            FOLLOWED.add(value);
        }
    }

    /** Runs the job at parallelism 2, paced, and cancels it after its first commits; returns the retained checkpoint. */
    private File runAndCancel(Windows windows, CecMode mode, File dir) throws Exception {
        return runAndCancel(windows, options(dir, mode).build(), dir, false);
    }

    private File runAndCancel(Windows windows, CecOptions options, File dir, boolean watermarkPerEvent)
            throws Exception {
        Configuration config = new Configuration();
        config.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, new File(tmp, "checkpoints").toURI().toString());
        config.set(CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION, ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        StreamExecutionEnvironment env = CecMiniCluster.environment(2, config);
        job(env, windows, options, PACED, 0, watermarkPerEvent);
        JobClient two = env.executeAsync("parallelism 2");
        Path first = PersistedStream.subtaskDirectory(new Path(dir.toURI()), 0);
        awaitCommitAfter(first, 3);
        two.cancel().get();
        while (!two.getJobStatus().get().isGloballyTerminalState()) {
            Thread.sleep(20);
        }
        assertThat(two.getJobStatus().get()).isEqualTo(JobStatus.CANCELED);
        return latestRetainedCheckpoint(new File(tmp, "checkpoints"));
    }

    private static TypeInformation<CecRecord<String, Window, Long, Long>> job(
            StreamExecutionEnvironment env, Windows windows, CecMode mode, File dir, double perSecond) {
        return job(env, windows, mode, dir, perSecond, 0);
    }

    /** The job; {@code failAtResult} > 0 fails it once when it forwards that many RESULTs. */
    private static TypeInformation<CecRecord<String, Window, Long, Long>> job(
            StreamExecutionEnvironment env, Windows windows, CecMode mode, File dir, double perSecond,
            int failAtResult) {
        return job(env, windows, options(dir, mode).build(), perSecond, failAtResult, false);
    }

    /** The job with {@code options}; {@code watermarkPerEvent}: a watermark after every event, not every 200 ms. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static TypeInformation<CecRecord<String, Window, Long, Long>> job(
            StreamExecutionEnvironment env, Windows windows, CecOptions options, double perSecond, int failAtResult,
            boolean watermarkPerEvent) {
        DataStream<Tuple2<String, Long>> events =
                windows == Windows.TUMBLING_PROCESSING_TIME
                        ? WordCountJob.words(env, EVENTS + PROCESSING_TIME_TAIL, WORDS, MILLIS_PER_EVENT, perSecond)
                                .filter(e -> e.f1 < EVENTS * MILLIS_PER_EVENT)
                                .setParallelism(1)
                        : WordCountJob.words(env, EVENTS, WORDS, MILLIS_PER_EVENT, perSecond);
        if (watermarkPerEvent) {
            events = events.assignTimestampsAndWatermarks(
                            WatermarkStrategy.<Tuple2<String, Long>>forGenerator(c -> new WatermarkPerEvent())
                                    .withTimestampAssigner((e, ts) -> e.f1))
                    .setParallelism(1);
        }
        KeyedStream<Tuple2<String, Long>, String> words = events.keyBy(w -> w.f0);
        CecWindows<Tuple2<String, Long>, String> cec = CecWindows.of(words);
        CecWindowedStream<Tuple2<String, Long>, String, ? extends Window> windowed =
                windows == Windows.COUNT ? cec.countWindow(COUNT_WINDOW) : cec.window(timeWindows(windows));
        DataStream<CecRecord<String, Window, Long, Long>> out =
                (DataStream) windowed.aggregate(new WordCountJob.Count(), options).uid("cec").name("cec");
        // In every run, so that the topology (and the operator ids) stay the same.
        out.map(new FailOnce(failAtResult)).addSink(new DiscardingSink<>());
        return out.getType();
    }

    private static CecOptions.Builder options(File dir, CecMode mode) {
        return CecOptions.builder(dir.toURI().toString())
                .mode(mode)
                .period(Duration.ofMillis(50))
                .slowThreshold(Duration.ofMillis(100));
    }

    /** The windows and the modes of the runs at parallelism 2, 3 and 1. */
    private static String describe(Windows windows, CecMode two, CecMode three, CecMode one) {
        String kind = windows == Windows.COUNT
                ? "count windows of " + COUNT_WINDOW
                : windows == Windows.SLIDING_EVENT_TIME
                        ? "sliding event-time windows"
                        : "tumbling processing-time windows of 200 ms";
        return two == three && three == one
                ? kind + ", " + two + " mode"
                : kind + ", " + two + " mode at parallelism 2, " + three + " at 3, " + one + " at 1";
    }

    private static WindowAssigner<Object, TimeWindow> timeWindows(Windows windows) {
        return windows == Windows.TUMBLING_PROCESSING_TIME
                ? TumblingProcessingTimeWindows.of(Duration.ofMillis(200))
                : eventTimeWindows();
    }

    /** Per word, its number of input events. */
    private static Map<String, Long> eventsPerWord() {
        Map<String, Long> events = new TreeMap<>();
        for (long i = 0; i < EVENTS; i++) {
            events.merge(WordCountJob.event(i, WORDS, MILLIS_PER_EVENT).f0, 1L, Long::sum);
        }
        return events;
    }

    private static SlidingEventTimeWindows eventTimeWindows() {
        return SlidingEventTimeWindows.of(Duration.ofSeconds(2), Duration.ofMillis(500));
    }

    /** What Flink's {@code WindowOperator} fires on the whole input, each as {@link #describe}d. */
    private static List<String> windowOperatorResults(Windows windows) throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        KeyedStream<Tuple2<String, Long>, String> words =
                WordCountJob.words(env, EVENTS, WORDS, MILLIS_PER_EVENT, 0).keyBy(w -> w.f0);
        DataStream<String> results =
                windows == Windows.COUNT
                        ? describedBy(words.countWindow(COUNT_WINDOW))
                        : describedBy(words.window(eventTimeWindows()));
        List<String> expected = new ArrayList<>();
        results.executeAndCollect().forEachRemaining(expected::add);
        assertThat(expected).as("Flink's WindowOperator fired windows").hasSizeGreaterThan(100);
        return expected;
    }

    private static <W extends Window> DataStream<String> describedBy(
            WindowedStream<Tuple2<String, Long>, String, W> windowed) {
        return windowed.aggregate(new WordCountJob.Count(), new ProcessWindowFunction<Long, String, String, W>() {
            @Override
            public void process(String key, Context ctx, Iterable<Long> counts, Collector<String> out) {
                for (Long count : counts) {
                    out.collect(describe(key, ctx.window(), count, ctx.window().maxTimestamp()));
                }
            }
        });
    }

    /** A result as compared: key, window, value and, for time windows, the timestamp (window end - 1). */
    private static String describe(String key, Window window, Long value, long timestamp) {
        return key + "|" + window + "|" + value + (window instanceof GlobalWindow ? "" : "|" + timestamp);
    }

    /** The RESULTs of the committed history, read back with CecLogSource. */
    private static List<String> history(
            File dir, TypeInformation<CecRecord<String, Window, Long, Long>> type, Windows windows) throws Exception {
        return history(dir, type, windows, Long.MIN_VALUE);
    }

    /** The RESULTs of the committed history at or after {@code fromTimestamp}. */
    private static List<String> history(
            File dir, TypeInformation<CecRecord<String, Window, Long, Long>> type, Windows windows, long fromTimestamp)
            throws Exception {
        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setParallelism(2);
        return CommittedResults.read(dir, type, reader, fromTimestamp).stream()
                .map(r -> describe(r.getKey(), r.getWindow(), r.getValue(), r.getTimestamp()))
                .collect(Collectors.toList());
    }

    private static Configuration restoreFrom(String path) {
        Configuration restore = new Configuration();
        restore.set(StateRecoveryOptions.SAVEPOINT_PATH, path);
        return restore;
    }

    /** Waits until the stream in {@code directory} has a commit of a checkpoint after {@code checkpointId}. */
    private static void awaitCommitAfter(Path directory, long checkpointId) throws Exception {
        FileSystem fs = FileSystem.getLocalFileSystem();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            Optional<CommitMarker> commit = PersistedStream.latestCommit(fs, directory);
            if (commit.isPresent() && commit.get().checkpointId() > checkpointId) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no commit after checkpoint " + checkpointId + " in " + directory + " within 60 s");
    }

    /** Waits until the stream in {@code directory} has a commit that ends after its first segment. */
    private static void awaitCommitPastFirstSegment(Path directory) throws Exception {
        FileSystem fs = FileSystem.getLocalFileSystem();
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        while (System.nanoTime() < deadline) {
            Optional<CommitMarker> commit = PersistedStream.latestCommit(fs, directory);
            if (commit.isPresent() && LogWriter.sequenceOf(commit.get().end().segment()) > 0) {
                return;
            }
            Thread.sleep(20);
        }
        throw new AssertionError("no commit past the first segment in " + directory + " within 60 s");
    }

    /** Each stream directory's name, and whether it has a commit. */
    private static Map<String, Boolean> committedStreams(Path root) throws IOException {
        FileSystem fs = FileSystem.getLocalFileSystem();
        Map<String, Boolean> streams = new TreeMap<>();
        for (Path stream : PersistedStream.subtaskDirectories(fs, root)) {
            streams.put(stream.getName(), PersistedStream.latestCommit(fs, stream).isPresent());
        }
        return streams;
    }

    /** {@link #committedStreams}, or why they could not be listed: for a failure's message. */
    private static String committedStreamsOrError(Path root) {
        try {
            return committedStreams(root).toString();
        } catch (IOException e) {
            return e.toString();
        }
    }

    /** The stacks of the threads whose name holds {@code name}: where a job that did not end waits. */
    private static String stacksOfThreadsNaming(String name) {
        StringBuilder stacks = new StringBuilder();
        Thread.getAllStackTraces().forEach((thread, stack) -> {
            if (thread.getName().contains(name)) {
                stacks.append('\n').append(thread.getName()).append(':');
                for (StackTraceElement frame : stack) {
                    stacks.append("\n\tat ").append(frame);
                }
            }
        });
        return stacks.toString();
    }

    /** The generation the restore from the savepoint started: the one after {@code checkpoint}'s. */
    private static long savepointGeneration(Iterable<String> streams, long checkpoint) throws IOException {
        long latest = 0;
        for (String name : streams) {
            latest = Math.max(latest, PersistedStream.generationOf(new Path(name)));
        }
        assertThat(latest).as("the savepoint's generation").isGreaterThan(checkpoint);
        return latest;
    }

    private static File latestRetainedCheckpoint(File checkpoints) throws IOException {
        List<File> retained = retainedCheckpoints(checkpoints);
        return retained.get(retained.size() - 1);
    }

    /** The retained checkpoints under {@code checkpoints}, oldest first; at least one. */
    private static List<File> retainedCheckpoints(File checkpoints) throws IOException {
        try (Stream<java.nio.file.Path> files = Files.walk(checkpoints.toPath())) {
            List<File> retained = files.filter(f -> f.getFileName().toString().equals("_metadata"))
                    .map(f -> f.getParent().toFile())
                    .sorted(Comparator.comparingLong(CecRescaleTest::checkpointIdOf))
                    .collect(Collectors.toList());
            assertThat(retained).as("retained checkpoints under " + checkpoints).isNotEmpty();
            return retained;
        }
    }

    private static long checkpointIdOf(File checkpoint) {
        return Long.parseLong(checkpoint.getName().substring("chk-".length()));
    }

    /** Every file and directory under {@code dir} with its size (directories: -1). */
    private static Map<String, Long> listing(File dir) throws IOException {
        java.nio.file.Path root = dir.toPath();
        try (Stream<java.nio.file.Path> files = Files.walk(root)) {
            Map<String, Long> listing = new TreeMap<>();
            for (java.nio.file.Path file : (Iterable<java.nio.file.Path>) files::iterator) {
                BasicFileAttributes attributes = Files.readAttributes(file, BasicFileAttributes.class);
                listing.put(root.relativize(file).toString(), attributes.isDirectory() ? -1L : attributes.size());
            }
            return listing;
        }
    }
}
