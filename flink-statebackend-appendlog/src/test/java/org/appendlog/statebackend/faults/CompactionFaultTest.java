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
import org.appendlog.statebackend.BackendHarness;
import org.appendlog.statebackend.compaction.Compactor;
import org.appendlog.statebackend.faults.Fault.Action;
import org.appendlog.statebackend.faults.Fault.Op;
import org.appendlog.statebackend.faults.FaultHarness.Completed;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.testutils.logging.LoggerAuditingExtension;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;
import org.slf4j.event.Level;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RunnableFuture;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kills compaction while it reads the segments, while it writes the run, and between the run and
 * the next completed checkpoint, by an exception, by interrupting the compacting thread, or by
 * disposing the backend (the task going away) mid-pass. The last completed checkpoint must
 * restore exactly, and later checkpoints too.
 */
class CompactionFaultTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("compaction-faults");
    private static final int KEYS = 300;
    private static final String SEGMENT = ".seg";
    private static final String RUN = "-run-";

    @TempDir Path dir;

    @RegisterExtension
    final LoggerAuditingExtension compactorLog =
            new LoggerAuditingExtension(Compactor.class, Level.INFO);

    enum Kill {
        EXCEPTION,
        INTERRUPT,
        /** The backend is disposed while the pass is blocked (the task is cancelled). */
        DISPOSE
    }

    static final class Case {
        final String step;
        final Fault fault;
        final Kill kill;

        Case(String step, Fault fault, Kill kill) {
            this.step = step;
            this.fault = fault;
            this.kill = kill;
        }

        @Override
        public String toString() {
            return step + " (" + (kill == Kill.EXCEPTION ? "exception" : kill == Kill.INTERRUPT ? "compacting thread interrupted" : "backend disposed mid-pass") + ")";
        }
    }

    static List<Case> cases() {
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("reading: opening a segment", Fault.on(Op.OPEN, SEGMENT, 1, Action.THROW), Kill.EXCEPTION));
        cases.add(new Case("reading: a batch's header and footer", Fault.on(Op.READ, SEGMENT, 1, Action.THROW), Kill.EXCEPTION));
        cases.add(new Case("reading: the records", Fault.on(Op.READ, SEGMENT, 3, Action.THROW), Kill.EXCEPTION));
        cases.add(new Case("reading: the records", Fault.on(Op.READ, SEGMENT, 3, Action.BLOCK_UNTIL_INTERRUPTED), Kill.INTERRUPT));
        cases.add(new Case("reading: the records", Fault.on(Op.READ, SEGMENT, 3, Action.BLOCK_UNTIL_INTERRUPTED), Kill.DISPOSE));
        cases.add(new Case("writing the run: create", Fault.on(Op.CREATE, RUN, 1, Action.THROW), Kill.EXCEPTION));
        cases.add(new Case("writing the run: segment header", Fault.on(Op.WRITE, RUN, 1, Action.THROW), Kill.EXCEPTION));
        cases.add(new Case("writing the run: records, torn", Fault.on(Op.WRITE, RUN, 5, Action.THROW), Kill.EXCEPTION));
        cases.add(new Case("writing the run: footer, torn", Fault.on(Op.WRITE, RUN, 1, Action.THROW).ofWritesOfAtLeast(128 * 16 + 12), Kill.EXCEPTION));
        cases.add(new Case("writing the run: sync", Fault.on(Op.SYNC, RUN, 1, Action.THROW), Kill.EXCEPTION));
        cases.add(new Case("writing the run: records", Fault.on(Op.WRITE, RUN, 5, Action.BLOCK_UNTIL_INTERRUPTED), Kill.INTERRUPT));
        cases.add(new Case("writing the run: sync", Fault.on(Op.SYNC, RUN, 1, Action.BLOCK_UNTIL_INTERRUPTED), Kill.INTERRUPT));
        cases.add(new Case("writing the run: records", Fault.on(Op.WRITE, RUN, 5, Action.BLOCK_UNTIL_INTERRUPTED), Kill.DISPOSE));
        return cases;
    }

    @AfterEach
    void disarm() {
        Fault.disarm();
    }

    private AppendLogStateBackend backend() {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, FaultyFileSystem.uriOf(dir.resolve("log")));
        // Every checkpoint's batch closes its segment, so each compaction has closed segments.
        config.setString(AppendLogOptions.SEGMENT_SIZE.key(), "1kb");
        config.set(AppendLogOptions.COMPACTION_ENABLED, true);
        config.set(AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO, 0.1);
        return new AppendLogStateBackend().configure(config, getClass().getClassLoader());
    }

    private String checkpoints() {
        return FaultyFileSystem.uriOf(dir.resolve("checkpoints"));
    }

    /** Rewrites half of the keys, so that older segments hold live and dead records. */
    private static void rewriteHalf(FaultHarness harness, int checkpoint) throws Exception {
        for (int key = 0; key < KEYS / 2; key++) {
            harness.put(key, checkpoint * 10_000L + key);
        }
        harness.remove(KEYS / 2 + checkpoint);
    }

    private static FaultHarness writeFirst(FaultHarness writer) throws Exception {
        for (int key = 0; key < KEYS; key++) {
            writer.put(key, key);
        }
        writer.checkpoint(1);
        BackendHarness.awaitCompaction(writer.backend);
        return writer;
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void aKilledCompactionChangesNoCheckpoint(Case c) throws Exception {
        AppendLogStateBackend stateBackend = backend();
        FaultHarness writer = writeFirst(FaultHarness.open(stateBackend, checkpoints()));
        boolean disposed = false;
        long passesBefore = BackendHarness.compactionPasses(writer.backend);
        try {
            Fault.arm(c.fault);
            rewriteHalf(writer, 2);
            Completed second = writer.checkpoint(2); // starts a compaction pass, which the fault hits
            if (c.kill != Kill.EXCEPTION) {
                assertThat(c.fault.awaitFired(30)).as("fault %s fired", c.fault).isTrue();
                if (c.kill == Kill.INTERRUPT) {
                    c.fault.blockedThread().interrupt();
                } else {
                    writer.close();
                    disposed = true;
                }
            }
            BackendHarness.awaitCompaction(writer.backend);
            Fault.disarm();
            assertThat(c.fault.hasFired()).as("fault %s fired", c.fault).isTrue();
            // A pass that failed is a warning; one that closing the backend stopped is not.
            List<String> warnings = compactorLog.getMessages().stream()
                    .filter(m -> m.contains("failed")).collect(Collectors.toList());
            if (c.kill == Kill.DISPOSE) {
                assertThat(warnings).isEmpty();
                assertThat(compactorLog.getMessages()).anyMatch(m -> m.contains("stopped: the backend is closing"));
            } else if (c.kill == Kill.EXCEPTION) {
                assertThat(warnings).isNotEmpty();
            }
            long passesAfterFault = BackendHarness.compactionPasses(writer.backend);

            FaultHarness.assertRestoresExactly(stateBackend, checkpoints(), second);
            FaultHarness survivor = disposed ? FaultHarness.restore(stateBackend, checkpoints(), second) : writer;
            try {
                Completed last = null;
                for (int checkpoint = 3; checkpoint <= 5; checkpoint++) {
                    rewriteHalf(survivor, checkpoint);
                    last = survivor.checkpoint(checkpoint);
                    BackendHarness.awaitCompaction(survivor.backend);
                }
                FaultHarness.assertRestoresExactly(stateBackend, checkpoints(), last);
                RELIABILITY.record(
                        "compaction: " + c,
                        "the pass after checkpoint 2 "
                                + (passesAfterFault > passesBefore ? "finished" : "failed")
                                + "; checkpoint 2 restores exactly; "
                                + (disposed ? "a new attempt from it" : "the backend")
                                + " goes on, " + BackendHarness.compactionPasses(survivor.backend)
                                + " later pass(es) finished, checkpoint 5 restores exactly");
            } finally {
                if (disposed) {
                    survivor.close();
                }
            }
        } finally {
            Fault.disarm();
            if (!disposed) {
                writer.close();
            }
        }
    }

    /** Compaction wrote a run and offered it; the checkpoint that would refer to it fails. */
    @Test
    void aFailureBetweenTheRunAndTheNextCompletedCheckpoint() throws Exception {
        AppendLogStateBackend stateBackend = backend();
        try (FaultHarness writer = writeFirst(FaultHarness.open(stateBackend, checkpoints()))) {
            rewriteHalf(writer, 2);
            Completed second = writer.checkpoint(2);
            BackendHarness.awaitCompaction(writer.backend);
            assertThat(BackendHarness.compactionPasses(writer.backend)).isPositive();

            rewriteHalf(writer, 3);
            Fault fault = Fault.on(Op.WRITE, "/chk/", 1, Action.THROW);
            Fault.arm(fault);
            RunnableFuture<SnapshotResult<KeyedStateHandle>> third = writer.snapshot(3);
            third.run();
            Fault.disarm();
            String failure = FaultHarness.failureOf(third);
            assertThat(failure).isNotNull();
            FaultHarness.assertRestoresExactly(stateBackend, checkpoints(), second);

            // One change: with checkpoint 3's half, fewer changes than live entries, so checkpoint 4
            // appends them, on the run (two halves would make it append all live entries instead).
            writer.put(0, 40_000L);
            Completed fourth = writer.checkpoint(4);
            assertThat(fourth.handle.getSharedState())
                    .extracting(HandleAndLocalPath::getLocalPath)
                    .anyMatch(name -> name.contains(RUN));
            FaultHarness.assertRestoresExactly(stateBackend, checkpoints(), fourth);
            RELIABILITY.record(
                    "compaction: run written, the checkpoint that refers to it fails (manifest write)",
                    "checkpoint 2 (before the run) restores exactly; the next checkpoint refers to the run and restores exactly");
        }
    }

    /** The task dies after the run was written, before any checkpoint referred to it. */
    @Test
    void aCrashBetweenTheRunAndTheNextCheckpoint() throws Exception {
        AppendLogStateBackend stateBackend = backend();
        Completed second;
        try (FaultHarness writer = writeFirst(FaultHarness.open(stateBackend, checkpoints()))) {
            rewriteHalf(writer, 2);
            second = writer.checkpoint(2);
            BackendHarness.awaitCompaction(writer.backend);
            assertThat(BackendHarness.compactionPasses(writer.backend)).isPositive();
        }
        FaultHarness.assertRestoresExactly(stateBackend, checkpoints(), second);
        try (FaultHarness next = FaultHarness.restore(stateBackend, checkpoints(), second)) {
            rewriteHalf(next, 3);
            FaultHarness.assertRestoresExactly(stateBackend, checkpoints(), next.checkpoint(3));
        }
        RELIABILITY.record(
                "compaction: the task dies after the run was written, before a checkpoint refers to it",
                "checkpoint 2 restores exactly (the unreferenced run is deleted with the backend); a new attempt's next checkpoint restores exactly");
    }
}
