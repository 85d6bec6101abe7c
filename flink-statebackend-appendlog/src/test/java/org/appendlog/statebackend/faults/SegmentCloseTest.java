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

package org.appendlog.statebackend.faults;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.faults.Fault.Action;
import org.appendlog.statebackend.faults.Fault.Op;
import org.appendlog.statebackend.faults.FaultHarness.Completed;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.testutils.logging.LoggerAuditingExtension;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.slf4j.event.Level;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Segments are closed on a thread of their own, not where the log is done with them: on HDFS a
 * close can wait 400 ms for the NameNode, and did so in checkpoints that rolled a segment and in
 * failovers. Here the close of a segment blocks (as a close waiting on HDFS would, only for good)
 * and the checkpoints, the dispose and the restores go on without it.
 */
class SegmentCloseTest {

    private static final String CLOSER_THREAD = "appendlog-segment-closer";

    @TempDir Path dir;

    @RegisterExtension
    final LoggerAuditingExtension closerLog =
            new LoggerAuditingExtension("org.appendlog.statebackend.log.SegmentCloser", Level.DEBUG);

    @AfterEach
    void disarm() {
        Fault.disarm();
    }

    private AppendLogStateBackend backend(String segmentSize) {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, FaultyFileSystem.uriOf(dir.resolve("log")));
        config.setString(AppendLogOptions.SEGMENT_SIZE.key(), segmentSize);
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        return new AppendLogStateBackend().configure(config, getClass().getClassLoader());
    }

    private String checkpoints() {
        return FaultyFileSystem.uriOf(dir.resolve("checkpoints"));
    }

    /** The first close on the closer thread blocks until its thread is interrupted. */
    private static Fault closerBlocks() {
        return Fault.on(Op.CLOSE, ".seg", 1, Action.BLOCK_UNTIL_INTERRUPTED).byThread(CLOSER_THREAD);
    }

    /**
     * Writes 200 keys and takes checkpoint 1, whose batch fills its 1 kb segment; returns once the
     * closer is blocked in that segment's close.
     */
    private static Completed firstRollInABlockedClose(FaultHarness writer, Fault closeBlocks)
            throws Exception {
        Fault.arm(closeBlocks);
        for (int key = 0; key < 200; key++) {
            writer.put(key, key);
        }
        Completed first = writer.checkpoint(1);
        assertThat(closeBlocks.awaitFired(30)).as("the closer closes the rolled segment").isTrue();
        return first;
    }

    @Test
    void checkpointsThatRollSegmentsDoNotWaitForTheirClose() throws Exception {
        // 1 kb segments: every batch fills its segment, so every checkpoint rolls one.
        AppendLogStateBackend stateBackend = backend("1kb");
        Fault closeBlocks = closerBlocks();
        try (FaultHarness writer = FaultHarness.open(stateBackend, checkpoints())) {
            Completed first = firstRollInABlockedClose(writer, closeBlocks);

            // The first segment is still being closed; checkpoints and restores go on.
            for (int key = 0; key < 100; key++) {
                writer.put(key, 2000 + key);
            }
            writer.remove(150);
            Completed second = writer.checkpoint(2);
            assertThat(closeBlocks.blockedThread().isAlive()).isTrue();
            FaultHarness.assertRestoresExactly(stateBackend, checkpoints(), first);
            FaultHarness.assertRestoresExactly(stateBackend, checkpoints(), second);
            assertThat(segments()).hasSizeGreaterThanOrEqualTo(2);

            // A close that fails on a segment that is still there is a warning.
            closeBlocks.blockedThread().interrupt();
            awaitCloserLog(m -> m.startsWith("Could not close state log segment"));
        }
    }

    @Test
    void aSegmentDeletedWhileItIsClosedIsNoWarning() throws Exception {
        AppendLogStateBackend stateBackend = backend("1kb");
        Fault closeBlocks = closerBlocks();
        try (FaultHarness writer = FaultHarness.open(stateBackend, checkpoints())) {
            firstRollInABlockedClose(writer, closeBlocks);

            // The checkpoints that needed it were discarded meanwhile (the job ended, say).
            Path first = segments().stream().filter(p -> p.toString().endsWith("-000000.seg")).findFirst().get();
            Files.delete(first);
            closeBlocks.blockedThread().interrupt();
            awaitCloserLog(m -> m.contains("was deleted while it was being closed"));
            assertThat(closerLog.getMessages()).noneMatch(m -> m.startsWith("Could not close"));
        }
    }

    @Test
    void disposingLeavesTheActiveSegmentsCloseToTheCloser() throws Exception {
        AppendLogStateBackend stateBackend = backend("64mb");
        Fault closeBlocks = closerBlocks();
        Completed checkpoint;
        try (FaultHarness writer = FaultHarness.open(stateBackend, checkpoints())) {
            for (int key = 0; key < 200; key++) {
                writer.put(key, 3 * key);
            }
            checkpoint = writer.checkpoint(1);
            Fault.arm(closeBlocks);
        }
        // Disposed: the active segment's close went to the closer, which is still in it.
        assertThat(closeBlocks.awaitFired(30)).as("the closer closes the active segment").isTrue();
        assertThat(closeBlocks.blockedThread().isAlive()).isTrue();

        // The failover's new attempt restores meanwhile.
        FaultHarness.assertRestoresExactly(stateBackend, checkpoints(), checkpoint);
        closeBlocks.blockedThread().interrupt();
        closeBlocks.blockedThread().join(30_000);
        assertThat(closeBlocks.blockedThread().isAlive()).isFalse();
        assertThat(segments()).as("the referenced segment is kept").hasSize(1);
    }

    private void awaitCloserLog(Predicate<String> message) throws InterruptedException {
        long deadline = System.nanoTime() + 30_000_000_000L;
        while (closerLog.getMessages().stream().noneMatch(message)) {
            assertThat(System.nanoTime()).as("the closer's log: %s", closerLog.getMessages()).isLessThan(deadline);
            Thread.sleep(20);
        }
    }

    private List<Path> segments() throws IOException {
        try (Stream<Path> files = Files.walk(dir.resolve("log"))) {
            return files.filter(p -> p.toString().endsWith(".seg")).collect(Collectors.toList());
        }
    }
}
