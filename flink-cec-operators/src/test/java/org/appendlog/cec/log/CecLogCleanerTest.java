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
import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.statebackend.faults.ReliabilityLog;

import org.apache.flink.api.common.restartstrategy.RestartStrategies;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.SinkFunction;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.atomic.AtomicLong;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Log retention runs on the operator's {@link LogCleaner} thread, not the task thread: while a
 * segment deletion hangs (as an HDFS call can), checkpoints keep completing and the operator keeps
 * emitting, nothing is deleted ahead of a committed checkpoint, and a cancelled job's cleaner is
 * stopped before the task ends.
 */
class CecLogCleanerTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("cec-log-cleaner");

    @RegisterExtension static final MiniClusterExtension MINI_CLUSTER = CecMiniCluster.withFourSlots();

    private static final int EVENTS_PER_CHECKPOINT = 200;
    /** Checkpoints that must commit while the deletion hangs; the task thread would commit none. */
    private static final int COMMITS_WHILE_HELD = 10;

    @TempDir File tmp;

    private TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type;

    @BeforeEach
    void reset() {
        HeldDeletesFileSystem.reset();
        CountingSink.RECORDS.set(0);
    }

    @Test
    void checkpointsGoOnWhileARetentionDeletionHangs() throws Exception {
        File dir = new File(tmp, "stream");
        HeldDeletesFileSystem.Hold hold = HeldDeletesFileSystem.holdNextSegmentDeletion(60_000);
        JobClient job = start(dir, "cec word count, a retention deletion hangs");
        assertThat(hold.awaitReached(60)).as("a segment deletion was held").isTrue();
        int commitsAtHold = HeldDeletesFileSystem.COMMITS.get();
        long recordsAtHold = CountingSink.RECORDS.get();
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (HeldDeletesFileSystem.COMMITS.get() < commitsAtHold + COMMITS_WHILE_HELD && System.nanoTime() < deadline) {
            Thread.sleep(20);
        }
        int commitsWhileHeld = HeldDeletesFileSystem.COMMITS.get() - commitsAtHold;
        long recordsWhileHeld = CountingSink.RECORDS.get() - recordsAtHold;
        hold.release();
        job.getJobExecutionResult().get();
        System.out.printf(
                "cleaner: %d commits and %d output tuples while a deletion by %s was held; %d segments deleted%n",
                commitsWhileHeld, recordsWhileHeld, hold.thread(), HeldDeletesFileSystem.DELETIONS.size());

        assertThat(hold.thread()).startsWith("cec-log-cleaner");
        assertThat(commitsWhileHeld).as("commits while the deletion was held").isGreaterThanOrEqualTo(COMMITS_WHILE_HELD);
        assertThat(recordsWhileHeld).as("output tuples while the deletion was held").isPositive();
        assertThat(HeldDeletesFileSystem.DELETIONS).hasSizeGreaterThan(4);
        // Each deletion follows its stream's commit of a completed checkpoint whose horizon is past it.
        assertThat(HeldDeletesFileSystem.DELETIONS)
                .allSatisfy(d -> assertThat(d.committedEnd)
                        .as("%s", d)
                        .isNotNull()
                        .satisfies(end -> assertThat(LogWriter.sequenceOf(end.segment()))
                                .isGreaterThan(LogWriter.sequenceOf(d.segment.getName()))));

        FileSystem fs = FileSystem.getLocalFileSystem();
        long earliest = Long.MIN_VALUE;
        for (Path subtask : PersistedStream.subtaskDirectories(fs, new Path(dir.toURI()))) {
            earliest = Math.max(earliest, LogStart.read(fs, subtask).orElseThrow().earliestTimestamp());
        }
        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setParallelism(2);
        List<String> results =
                CommittedResults.readDescribed(dir, type, reader, earliest).stream().sorted().collect(Collectors.toList());
        assertThat(results).as("committed RESULTs from t=%d", earliest).isEqualTo(CecLogRetentionTest.expectedResults(earliest));
        RELIABILITY.record(
                "a segment deletion of log retention hangs until released",
                "checkpoints go on: at least " + COMMITS_WHILE_HELD + " commits and output tuples while it hangs (on the"
                        + " cec-log-cleaner thread); every segment deleted lies before its stream's committed end; the"
                        + " committed RESULTs from the earliest kept timestamp equal the word counts");
    }

    @Test
    void closeStopsTheCleanerBeforeTheTaskEnds() throws Exception {
        long holdMillis = 3_000;
        HeldDeletesFileSystem.Hold hold = HeldDeletesFileSystem.holdNextSegmentDeletion(holdMillis);
        JobClient job = start(new File(tmp, "cancelled"), "cec word count, cancelled while a deletion hangs");
        assertThat(hold.awaitReached(60)).as("a segment deletion was held").isTrue();
        job.cancel().get();
        while (!job.getJobStatus().get().isGloballyTerminalState()) {
            Thread.sleep(10);
        }
        int deletionsAtEnd = HeldDeletesFileSystem.DELETIONS.size();
        Thread.sleep(holdMillis + 1_000); // a cleaner left running would delete now

        assertThat(hold.wasInterrupted()).as("the held deletion was interrupted").isTrue();
        assertThat(HeldDeletesFileSystem.DELETIONS).as("segments deleted after the job was cancelled").hasSize(deletionsAtEnd);
        RELIABILITY.record(
                "the job is cancelled while a segment deletion of log retention hangs",
                "close interrupts the cleaner and waits for it; no segment is deleted after the job was cancelled");
    }

    private JobClient start(File dir, String name) throws Exception {
        CecOptions options = CecLogRetentionTest.options(HeldDeletesFileSystem.uriOf(dir)).build();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(100);
        env.setRestartStrategy(RestartStrategies.noRestart());
        DataStream<Tuple2<String, Long>> words =
                WordCountJob.words(
                        env, CecLogRetentionTest.EVENTS, CecLogRetentionTest.WORDS, CecLogRetentionTest.MILLIS_PER_EVENT,
                        RateLimiterStrategy.perCheckpoint(EVENTS_PER_CHECKPOINT), false);
        DataStream<CecRecord<String, TimeWindow, Long, Long>> counts =
                WordCountJob.cecCounts(words, WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1)), options);
        type = counts.getType();
        counts.addSink(new CountingSink());
        return env.executeAsync(name);
    }

    /** Counts the tuples the CEC operator emits (chained to it, so on its task thread). */
    private static final class CountingSink implements SinkFunction<CecRecord<String, TimeWindow, Long, Long>> {
        static final AtomicLong RECORDS = new AtomicLong();

        @Override
        public void invoke(CecRecord<String, TimeWindow, Long, Long> value, Context context) {
            RECORDS.incrementAndGet();
        }
    }
}
