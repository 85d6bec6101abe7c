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

package org.appendlog.statebackend.compaction;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendHarness;
import org.appendlog.statebackend.log.BatchCompression;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SnapshotResult;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.RunnableFuture;
import java.util.function.Predicate;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Compaction against checkpoints in every order a task sees them: asynchronous phases that end
 * late, barriers ahead of the last completion, completions that subsume checkpoints never heard
 * of again, aborts of checkpoints discarded unregistered, full checkpoints, acknowledgements that
 * reach the JobManager in another order than they were sent, or after their checkpoint was
 * subsumed, and acknowledgements it refuses. Runs are taken up,
 * dropped, come back and leave for good at random; whatever happened, the last checkpoint
 * restores exactly the state its barrier saw.
 */
class CompactionInterleavingTest {

    private static final int KEYS = 3_000;
    private static final int STEPS = 400;

    @TempDir Path logDir;

    /** One checkpoint on its way, from barrier to completion or abandonment. */
    private static final class Checkpoint {
        final long id;
        final Map<Integer, Long> state;
        RunnableFuture<SnapshotResult<KeyedStateHandle>> asyncPhase;
        IncrementalRemoteKeyedStateHandle handle;
        boolean acknowledged;

        Checkpoint(long id, Map<Integer, Long> state) {
            this.id = id;
            this.state = state;
        }

        boolean written() {
            return asyncPhase == null;
        }

        boolean awaitsAcknowledgement() {
            return written() && !acknowledged;
        }

        /**
         * Runs the asynchronous phase. If the checkpoint was declined meanwhile, the task
         * discards what it wrote, unregistered; else it sends the acknowledgement, which reaches
         * the JobManager now or later.
         */
        void write(BackendHarness harness, boolean declined) throws Exception {
            handle = BackendHarness.written(asyncPhase);
            asyncPhase = null;
            if (declined) {
                handle.discardState();
            }
        }

        /**
         * The JobManager registers the acknowledgement; false if it refuses it, having found a
         * placeholder it does not know (a checkpoint completed that dropped the segment, or the
         * one that wrote it was discarded unregistered or is not registered yet).
         */
        boolean acknowledge(BackendHarness harness) {
            try {
                harness.acknowledge(handle, id);
            } catch (IllegalStateException e) {
                assertThat(e).hasMessageContaining("Attempt to reference unknown state");
                return false;
            }
            acknowledged = true;
            return true;
        }

        /**
         * The acknowledgement reaches the JobManager after the checkpoint can no longer complete:
         * it discards the state, unregistered.
         */
        void lateAcknowledgement() throws Exception {
            if (awaitsAcknowledgement()) {
                handle.discardState();
            }
        }
    }

    @ParameterizedTest
    @ValueSource(longs = {1, 2, 3, 4, 5, 6, 7, 8, 9, 10, 11, 12, 13, 14, 15, 16})
    void theLastCheckpointRestoresWhateverTheOrder(long seed) throws Exception {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, logDir.toUri().toString());
        config.setString(AppendLogOptions.SEGMENT_SIZE.key(), "32kb");
        config.setString(AppendLogOptions.COMPACTION_MIN_LAG.key(), "0 ms");
        config.set(AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO, 0.3);
        // Passes on one thread and on two (key-group slices); records compressed and raw.
        config.set(AppendLogOptions.COMPACTION_THREADS, 1 + (int) (seed % 2));
        config.set(
                AppendLogOptions.COMPRESSION,
                seed % 3 == 0 ? BatchCompression.NONE : BatchCompression.LZ4);
        AppendLogStateBackend stateBackend =
                new AppendLogStateBackend().configure(config, getClass().getClassLoader());
        SharedStateRegistry registry = BackendHarness.newRegistry();
        Random random = new Random(seed);
        Map<Integer, Long> state = new HashMap<>();
        List<Checkpoint> open = new ArrayList<>();
        long nextId = 1;
        int completions = 0;
        int refusals = 0;
        long fullBatches;
        Checkpoint last;
        try (BackendHarness harness = BackendHarness.open(stateBackend, registry)) {
            for (int key = 0; key < KEYS; key++) {
                harness.put(key, key);
                state.put(key, (long) key);
            }
            for (int step = 0; step < STEPS; step++) {
                int roll = random.nextInt(100);
                if (roll < 35) {
                    for (int i = 0; i < 200; i++) {
                        int key = random.nextInt(KEYS);
                        if (random.nextInt(10) < 7) {
                            long value = (long) key * 10_000 + step;
                            harness.put(key, value);
                            state.put(key, value);
                        } else {
                            harness.remove(key);
                            state.remove(key);
                        }
                    }
                } else if (roll < 60) {
                    Checkpoint c = new Checkpoint(nextId++, new HashMap<>(state));
                    c.asyncPhase = harness.snapshot(c.id);
                    open.add(c);
                    if (random.nextBoolean()) {
                        c.write(harness, false);
                        refusals += acknowledgeNowOrLater(harness, open, c, random);
                    }
                } else if (roll < 75) {
                    Checkpoint c = pick(open, random, cp -> !cp.written());
                    if (c != null) {
                        c.write(harness, false);
                        refusals += acknowledgeNowOrLater(harness, open, c, random);
                    }
                } else if (roll < 80) {
                    Checkpoint c = pick(open, random, Checkpoint::awaitsAcknowledgement);
                    if (c != null) {
                        refusals += acknowledge(harness, open, c);
                    }
                } else if (roll < 93) {
                    Checkpoint c = pick(open, random, cp -> cp.acknowledged);
                    if (c != null) {
                        harness.complete(c.id);
                        // Every completed checkpoint restores what its barrier saw.
                        BackendHarness.assertRestores(
                                stateBackend, registry, c.handle, KEYS, c.state::get);
                        completions++;
                        abandonUpTo(harness, open, c.id, random);
                    }
                } else {
                    // Declined by another task: the task hears of it, before or after its
                    // asynchronous phase ends.
                    Checkpoint c = open.isEmpty() ? null : open.get(random.nextInt(open.size()));
                    if (c != null) {
                        open.remove(c);
                        harness.backend.notifyCheckpointAborted(c.id);
                        if (!c.written()) {
                            c.write(harness, true);
                        }
                        c.lateAcknowledgement();
                    }
                }
                if (random.nextInt(4) == 0) {
                    harness.awaitCompaction();
                }
            }
            // The job goes on: the acknowledgements on their way arrive, and one more
            // checkpoint completes, after everything still open.
            for (Checkpoint c : new ArrayList<>(open)) {
                if (c.awaitsAcknowledgement()) {
                    refusals += acknowledge(harness, open, c);
                }
            }
            last = new Checkpoint(nextId, new HashMap<>(state));
            last.asyncPhase = harness.snapshot(last.id);
            last.write(harness, false);
            assertThat(last.acknowledge(harness)).as("the last checkpoint registered").isTrue();
            harness.complete(last.id);
            abandonUpTo(harness, open, last.id, random);
            // Compaction judged liveness by an index that describes the log exactly.
            last.handle = harness.assertIndexDescribesTheLog(stateBackend, last.handle);
            fullBatches = harness.fullBatches();
        }
        System.out.printf(
                "seed %d: %d checkpoints, %d completed, %d refused, %d full, %d keys%n",
                seed, nextId, completions + 1, refusals, fullBatches, last.state.size());
        assertThat(completions).isGreaterThan(10);
        BackendHarness.assertRestores(
                stateBackend,
                registry,
                last.handle,
                KEYS,
                key -> last.state.get(key));
    }

    /** An open checkpoint that {@code matches}; null if there is none. */
    private static Checkpoint pick(
            List<Checkpoint> open, Random random, Predicate<Checkpoint> matches) {
        List<Checkpoint> candidates = new ArrayList<>();
        for (Checkpoint c : open) {
            if (matches.test(c)) {
                candidates.add(c);
            }
        }
        return candidates.isEmpty() ? null : candidates.get(random.nextInt(candidates.size()));
    }

    /** Acknowledges {@code c} now, or leaves its acknowledgement on its way; returns refusals. */
    private static int acknowledgeNowOrLater(
            BackendHarness harness, List<Checkpoint> open, Checkpoint c, Random random) {
        return random.nextBoolean() ? acknowledge(harness, open, c) : 0;
    }

    /**
     * Acknowledges {@code c}; returns 1 if the JobManager refused it: then the checkpoint can
     * never complete, and expires, which the task hears of as an abort.
     */
    private static int acknowledge(BackendHarness harness, List<Checkpoint> open, Checkpoint c) {
        if (c.acknowledge(harness)) {
            return 0;
        }
        open.remove(c);
        harness.backend.notifyCheckpointAborted(c.id);
        return 1;
    }

    /**
     * Checkpoints up to {@code completed} can no longer complete: some hear of it (aborted), some
     * never do; the asynchronous phases that end late find no checkpoint to acknowledge, and
     * what they wrote is discarded unregistered.
     */
    private static void abandonUpTo(
            BackendHarness harness, List<Checkpoint> open, long completed, Random random)
            throws Exception {
        List<Checkpoint> abandoned = new ArrayList<>();
        for (Checkpoint c : open) {
            if (c.id <= completed) {
                abandoned.add(c);
            }
        }
        Collections.shuffle(abandoned, random);
        for (Checkpoint c : abandoned) {
            open.remove(c);
            if (c.id != completed && random.nextBoolean()) {
                harness.backend.notifyCheckpointAborted(c.id);
            }
            if (!c.written()) {
                c.write(harness, true);
            }
            c.lateAcknowledgement();
        }
    }
}
