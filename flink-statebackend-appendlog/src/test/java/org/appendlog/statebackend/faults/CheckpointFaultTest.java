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
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.MethodSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.RunnableFuture;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Kills the writer of checkpoint 3 at every step: the synchronous capture, the batch append (open,
 * segment header, batch header, records, footer), the sync and the manifest, by an exception, by
 * interrupting the asynchronous snapshot thread, or by cancelling the snapshot future. Then:
 *
 * <ul>
 *   <li>a new attempt restores the last completed checkpoint with exactly its state, and its own
 *       next checkpoint restores exactly;
 *   <li>the surviving backend's next checkpoint holds the failed checkpoint's changes too and
 *       restores exactly (a failed checkpoint loses nothing).
 * </ul>
 */
class CheckpointFaultTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("checkpoint-faults");
    private static final String SEGMENT = ".seg";
    private static final String MANIFEST = "/chk/";
    /** The footer of a batch over 128 key groups: 16 bytes per group and a 12-byte tail. */
    private static final int FOOTER_BYTES = 128 * 16 + 12;

    @TempDir Path dir;

    /** How the writer dies. */
    enum Kill {
        EXCEPTION,
        INTERRUPT,
        CANCEL,
        /** The task thread's interrupt flag is set while it runs the synchronous phase. */
        INTERRUPT_FLAG
    }

    /** Where the active segment is when checkpoint 3 starts. */
    enum Segment {
        /** 1 kb segments: every batch closes its segment, checkpoint 3 opens a new one. */
        NEW,
        /** 64 mb segments: checkpoint 3 appends after the batches of checkpoints 1 and 2. */
        SHARED
    }

    static final class Case {
        final String step;
        final Segment segment;
        final Fault fault;
        final int serializerFailsAt;
        final Kill kill;

        Case(String step, Segment segment, Fault fault, int serializerFailsAt, Kill kill) {
            this.step = step;
            this.segment = segment;
            this.fault = fault;
            this.serializerFailsAt = serializerFailsAt;
            this.kill = kill;
        }

        @Override
        public String toString() {
            String how =
                    kill == Kill.EXCEPTION
                            ? "exception"
                            : kill == Kill.INTERRUPT
                                    ? "snapshot thread interrupted"
                                    : kill == Kill.CANCEL ? "snapshot future cancelled" : "interrupt flag";
            return step + " (" + how + ", " + segment.name().toLowerCase() + " segment)";
        }
    }

    static List<Case> cases() {
        List<Case> cases = new ArrayList<>();
        cases.add(new Case("write: serializer throws on the first write logged for checkpoint 3", Segment.SHARED, null, 1, Kill.EXCEPTION));
        cases.add(new Case("write: serializer throws on the 30th write logged for checkpoint 3", Segment.SHARED, null, 30, Kill.EXCEPTION));
        cases.add(new Case("sync phase: task thread interrupted", Segment.SHARED, null, 0, Kill.INTERRUPT_FLAG));
        cases.add(new Case("append: creating the segment", Segment.NEW, throwing(Op.CREATE, SEGMENT, 1), 0, Kill.EXCEPTION));
        cases.add(new Case("append: segment header write", Segment.NEW, throwing(Op.WRITE, SEGMENT, 1), 0, Kill.EXCEPTION));
        for (Segment segment : Segment.values()) {
            int first = segment == Segment.NEW ? 2 : 1;
            cases.add(new Case("append: batch header write, torn", segment, throwing(Op.WRITE, SEGMENT, first), 0, Kill.EXCEPTION));
            cases.add(new Case("append: records write, torn mid-batch", segment, throwing(Op.WRITE, SEGMENT, first + 9), 0, Kill.EXCEPTION));
            cases.add(new Case("append: footer write, torn", segment, throwing(Op.WRITE, SEGMENT, 1).ofWritesOfAtLeast(FOOTER_BYTES), 0, Kill.EXCEPTION));
            cases.add(new Case("append: records write", segment, blocking(Op.WRITE, SEGMENT, first + 9), 0, Kill.INTERRUPT));
            cases.add(new Case("append: records write", segment, blocking(Op.WRITE, SEGMENT, first + 9), 0, Kill.CANCEL));
            cases.add(new Case("sync of the batch", segment, throwing(Op.SYNC, SEGMENT, 1), 0, Kill.EXCEPTION));
            cases.add(new Case("sync of the batch", segment, blocking(Op.SYNC, SEGMENT, 1), 0, Kill.INTERRUPT));
            cases.add(new Case("sync of the batch", segment, blocking(Op.SYNC, SEGMENT, 1), 0, Kill.CANCEL));
        }
        cases.add(new Case("manifest: create", Segment.SHARED, throwing(Op.CREATE, MANIFEST, 1), 0, Kill.EXCEPTION));
        cases.add(new Case("manifest: write", Segment.SHARED, throwing(Op.WRITE, MANIFEST, 1), 0, Kill.EXCEPTION));
        cases.add(new Case("manifest: close", Segment.SHARED, throwing(Op.CLOSE, MANIFEST, 1), 0, Kill.EXCEPTION));
        cases.add(new Case("manifest: write", Segment.SHARED, blocking(Op.WRITE, MANIFEST, 1), 0, Kill.INTERRUPT));
        cases.add(new Case("manifest: write", Segment.SHARED, blocking(Op.WRITE, MANIFEST, 1), 0, Kill.CANCEL));
        return cases;
    }

    private static Fault throwing(Op op, String path, int nth) {
        return Fault.on(op, path, nth, Action.THROW);
    }

    private static Fault blocking(Op op, String path, int nth) {
        return Fault.on(op, path, nth, Action.BLOCK_UNTIL_INTERRUPTED);
    }

    @AfterEach
    void disarm() {
        Fault.disarm();
        FailingLongSerializer.disarm();
    }

    private AppendLogStateBackend backend(Segment segment) {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, FaultyFileSystem.uriOf(dir.resolve("log")));
        config.setString(AppendLogOptions.SEGMENT_SIZE.key(), segment == Segment.NEW ? "1kb" : "64mb");
        config.set(AppendLogOptions.COMPACTION_ENABLED, false);
        return new AppendLogStateBackend().configure(config, getClass().getClassLoader());
    }

    @ParameterizedTest(name = "{0}")
    @MethodSource("cases")
    void aKilledCheckpointLosesNothingAndRestoresNothingWrong(Case c) throws Exception {
        AppendLogStateBackend stateBackend = backend(c.segment);
        String checkpoints = FaultyFileSystem.uriOf(dir.resolve("checkpoints"));
        try (FaultHarness writer = FaultHarness.open(stateBackend, checkpoints)) {
            for (int key = 0; key < 200; key++) {
                writer.put(key, key);
            }
            writer.checkpoint(1);
            for (int key = 0; key < 50; key++) {
                writer.put(key, 1000 + key);
            }
            for (int key = 190; key < 195; key++) {
                writer.remove(key);
            }
            Completed second = writer.checkpoint(2);

            // The changes of checkpoint 3, which the fault hits. A write whose serialization
            // fails is marked instead, and serialized at the barrier.
            FailingLongSerializer.failSerializeAt(c.serializerFailsAt);
            for (int key = 50; key < 100; key++) {
                writer.put(key, 3000 + key);
            }
            for (int key = 185; key < 188; key++) {
                writer.remove(key);
            }
            for (int key = 200; key < 210; key++) {
                writer.put(key, 3000 + key);
            }
            String failure = takeFaultedCheckpoint(writer, c);
            // Either outcome is legal (Flink's checkpoint streams retry a failed create, and the
            // synchronous phase does no I/O that an interrupt could stop); what is checked is
            // that every completed checkpoint restores exactly.
            Completed last = failure == null ? writer.complete(3, lastResult) : second;

            // A new attempt after the crash: the last completed checkpoint, exactly.
            FaultHarness.assertRestoresExactly(stateBackend, checkpoints, last);
            try (FaultHarness next = FaultHarness.restore(stateBackend, checkpoints, last)) {
                next.put(7, 7007);
                next.remove(8);
                FaultHarness.assertRestoresExactly(stateBackend, checkpoints, next.checkpoint(10));
            }

            // The writer itself goes on: its next checkpoint carries checkpoint 3's changes.
            writer.put(300, 300);
            Completed fourth = writer.checkpoint(4);
            assertThat(fourth.state).containsEntry(99, 3099L).doesNotContainKey(186);
            FaultHarness.assertRestoresExactly(stateBackend, checkpoints, fourth);

            RELIABILITY.record(
                    c.toString(),
                    (failure == null ? "checkpoint 3 completed" : "checkpoint 3 failed")
                            + "; a new attempt restores checkpoint "
                            + last.id
                            + " exactly; the writer's next checkpoint holds checkpoint 3's changes and restores exactly"
                            + (failure == null ? "" : ". Error: " + failure));
        }
    }

    private SnapshotResult<KeyedStateHandle> lastResult;

    /** Takes checkpoint 3 with the case's fault; returns why it failed, or null. */
    private String takeFaultedCheckpoint(FaultHarness writer, Case c) throws Exception {
        lastResult = null;
        RunnableFuture<SnapshotResult<KeyedStateHandle>> future;
        Fault.arm(c.fault);
        try {
            if (c.kill == Kill.INTERRUPT_FLAG) {
                Thread.currentThread().interrupt();
            }
            try {
                future = writer.snapshot(3);
            } catch (Exception e) {
                return "synchronous phase: " + FaultHarness.messages(e);
            } finally {
                Thread.interrupted();
            }
            Thread async = new Thread(future, "async-snapshot-3");
            async.start();
            if (c.kill == Kill.INTERRUPT || c.kill == Kill.CANCEL) {
                assertThat(c.fault.awaitFired(30)).as("fault %s fired", c.fault).isTrue();
                if (c.kill == Kill.INTERRUPT) {
                    c.fault.blockedThread().interrupt();
                } else {
                    future.cancel(true);
                }
            }
            async.join(60_000);
            assertThat(async.isAlive()).as("snapshot thread ended").isFalse();
        } finally {
            Fault.disarm();
            FailingLongSerializer.disarm();
        }
        if (c.fault != null) {
            assertThat(c.fault.hasFired()).as("fault %s fired", c.fault).isTrue();
        }
        String failure = FaultHarness.failureOf(future);
        if (failure == null) {
            lastResult = future.get();
        }
        return failure;
    }

}
