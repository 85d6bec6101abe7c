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

import org.appendlog.statebackend.AppendLogKeyedStateBackend;
import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendHarness;
import org.appendlog.statebackend.faults.FaultHarness.Completed;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.executiongraph.ExecutionAttemptID;
import org.apache.flink.runtime.executiongraph.ExecutionGraphID;
import org.apache.flink.runtime.jobgraph.JobVertexID;
import org.apache.flink.runtime.scheduler.strategy.ExecutionVertexID;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FsCheckpointStreamFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.net.URI;
import java.nio.file.Files;
import java.util.ArrayDeque;
import java.util.Collections;
import java.util.Deque;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Task attempts that crash (abandoned without a close, their background work finished) leave
 * files in the log that no completed checkpoint refers to. After the restore, a few completed
 * checkpoints and the job's end, the log must hold exactly the files that the retained
 * checkpoints refer to, and every retained checkpoint must still restore exactly. Each attempt
 * belongs to a job run (its execution graph); the JobManager's side (shared state registry,
 * retained checkpoints) is modelled as Flink's {@code CheckpointCoordinator} does it. Segments of
 * 1 KB make each checkpoint open a segment of its own.
 */
class CrashOrphansTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("crash-orphans");
    private static final int KEYS = 300;

    @TempDir java.nio.file.Path base;
    private final Random random = new Random(38);

    @Test
    void aCrashDuringACheckpointLeavesNothingBehind() throws Exception {
        Run run = new Run(1);
        Attempt first = run.start(null);
        first.checkpoints(1, 3);
        first.crashDuring(4);
        Set<String> left = first.files();

        int swept = run.recoverAndEnd(5, 7, first);
        RELIABILITY.record(
                "Crash (no close) during checkpoint 4, after its batch was written; restore of"
                        + " checkpoint 3, checkpoints 5 to 7, the job ends",
                "The sweep after the restore deleted " + swept + " of the crashed attempt's "
                        + left.size() + " files; at the end the log holds exactly the "
                        + run.retainedFiles().size() + " files the retained checkpoint refers to,"
                        + " which restores exactly");
    }

    @Test
    void olderRetainedCheckpointsKeepTheSegmentsCompactionReplaced() throws Exception {
        Run run = new Run(3);
        Attempt first = run.start(null);
        first.checkpoints(1, 8);
        Set<String> oldest = filesOf(run.retained.getFirst());
        Set<String> newest = filesOf(run.retained.getLast());
        Set<String> onlyOlder = new TreeSet<>(oldest);
        onlyOlder.removeAll(newest);
        assertThat(onlyOlder)
                .as("segments that only an older retained checkpoint refers to")
                .isNotEmpty();
        first.crashDuring(9);

        // The older retained checkpoints restore exactly after the sweep: their segments stayed.
        run.recoverAndEnd(10, 11, first);
        RELIABILITY.record(
                "Crash during checkpoint 9 with state.checkpoints.num-retained 3 and compaction;"
                        + " the oldest retained checkpoint refers to " + onlyOlder.size()
                        + " segment(s) the newest does not",
                "After the restore and its sweep all 3 retained checkpoints restore exactly;"
                        + " after checkpoints 10 and 11 and the job's end the log holds exactly"
                        + " the " + run.retainedFiles().size() + " files they refer to");
    }

    @Test
    void aSecondFailureBeforeTheFirstSweepLeavesNothingBehind() throws Exception {
        Run run = new Run(2);
        Attempt first = run.start(null);
        first.checkpoints(1, 3);
        first.crashDuring(4);
        Map<java.nio.file.Path, byte[]> orphans = first.unreferencedFiles();
        assertThat(orphans).isNotEmpty();

        // The second attempt completes checkpoints but dies before its sweep counted: the first
        // attempt's orphans are back on disk as if it had never run.
        Attempt second = run.start(first);
        second.awaitSweep();
        second.checkpoints(5, 6);
        second.crashDuring(7);
        for (Map.Entry<java.nio.file.Path, byte[]> orphan : orphans.entrySet()) {
            Files.write(orphan.getKey(), orphan.getValue());
        }

        int swept = run.recoverAndEnd(8, 9, first, second);
        RELIABILITY.record(
                "Crash during checkpoint 4; the next attempt completes 5 and 6 and crashes"
                        + " during 7 before its sweep took effect (the first crash's "
                        + orphans.size() + " orphan(s) put back)",
                "The third attempt's sweep deleted " + swept + " file(s) of both crashed"
                        + " attempts; after checkpoints 8 and 9 and the job's end the log holds"
                        + " exactly the files of the retained checkpoints, which restore exactly");
    }

    @Test
    void aCompletedCheckpointKeepsWhatItsLateAsynchronousPhaseReferredTo() throws Exception {
        Run run = new Run(1);
        Attempt first = run.start(null);
        first.checkpoints(1, 3);
        first.update();
        Map<Integer, Long> atFour = new TreeMap<>(first.model);
        RunnableFuture<SnapshotResult<KeyedStateHandle>> four = first.barrier(4);
        first.update();
        Set<String> before = first.files();
        first.snapshot(5);
        Set<String> openedByFive = first.files();
        openedByFive.removeAll(before);
        assertThat(openedByFive)
                .as("files that checkpoint 5 created while checkpoint 4 was still being written")
                .isNotEmpty()
                .allMatch(name -> name.contains("-c4-"));
        // Checkpoint 4's asynchronous phase ends after 5's; 4 completes, 5 is aborted.
        run.complete(first, 4, first.written(four), atFour);
        first.backend.notifyCheckpointAborted(5);
        BackendHarness.awaitCompaction(first.backend);

        int swept = run.recoverAndEnd(6, 7, first);
        RELIABILITY.record(
                "Two checkpoints at once: 5's asynchronous phase creates " + openedByFive.size()
                        + " file(s) while 4's is pending; 4 completes after it, 5 is aborted;"
                        + " crash, restore of checkpoint 4",
                "Files created while 4 was pending carry floor 4 and stay until unused; the sweep"
                        + " deleted " + swept + " file(s); checkpoint 4 restores exactly, and after"
                        + " checkpoints 6 and 7 and the job's end the log holds exactly the"
                        + " retained files");
    }

    @Test
    void anotherRunOfTheSameJobIdIsNeverTouched() throws Exception {
        Run earlier = new Run(2);
        Attempt first = earlier.start(null);
        first.checkpoints(1, 3);
        first.crashDuring(4);
        Set<String> earlierFiles = first.files();

        // Same job id and log directory, a new execution graph, no restore.
        Run later = new Run(1);
        Attempt fresh = later.start(null);
        assertThat(fresh.awaitSweep()).isZero();
        fresh.checkpoints(1, 3);
        fresh.crashDuring(4);
        Attempt restarted = later.start(fresh);
        int swept = restarted.awaitSweep();
        assertThat(swept).isPositive();
        restarted.checkpoints(5, 6);
        restarted.end();

        assertThat(restarted.files()).containsAll(earlierFiles);
        earlier.assertRetainedRestoreExactly();
        Set<String> laterFiles = new TreeSet<>(restarted.files());
        laterFiles.removeAll(earlierFiles);
        assertThat(laterFiles).isEqualTo(later.retainedFiles());
        RELIABILITY.record(
                "A second run of the same job id (same log directory, new execution graph) that"
                        + " restored nothing crashes and restores; the first run had crashed too",
                "The second run's sweep deleted " + swept + " file(s), all its own; the first"
                        + " run's " + earlierFiles.size() + " files (its orphan among them) stay,"
                        + " and its retained checkpoints restore exactly");
    }

    // ------------------------------------------------------------------------

    private AppendLogStateBackend stateBackend() {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, base.resolve("log").toUri().toString());
        config.set(AppendLogOptions.SEGMENT_SIZE, MemorySize.parse("1kb"));
        config.set(AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO, 0.2);
        return new AppendLogStateBackend().configure(config, getClass().getClassLoader());
    }

    private Set<String> logFiles() throws IOException {
        try (Stream<java.nio.file.Path> files = Files.walk(base.resolve("log"))) {
            return files.filter(Files::isRegularFile)
                    .map(f -> f.getFileName().toString())
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }

    /** The log files {@code checkpoint} refers to. */
    private static Set<String> filesOf(Completed checkpoint) {
        return checkpoint.handle.getSharedState().stream()
                .map(HandleAndLocalPath::getLocalPath)
                .collect(Collectors.toCollection(TreeSet::new));
    }

    /** One job run: an execution graph and the JobManager's checkpoint bookkeeping. */
    private final class Run {
        final ExecutionGraphID graph = new ExecutionGraphID();
        final ExecutionVertexID vertex = new ExecutionVertexID(new JobVertexID(), 0);
        final SharedStateRegistry registry = BackendHarness.newRegistry();
        final Deque<Completed> retained = new ArrayDeque<>();
        final int numRetained;
        final String checkpointDir;
        int attempts;

        Run(int numRetained) {
            this.numRetained = numRetained;
            this.checkpointDir = base.resolve("checkpoints-" + graph).toUri().toString();
        }

        /** A new attempt, restored from the latest retained checkpoint if {@code after} crashed. */
        Attempt start(Attempt after) throws Exception {
            Completed latest = after == null ? null : retained.peekLast();
            return new Attempt(
                    this,
                    new ExecutionAttemptID(graph, vertex, attempts++),
                    latest == null
                            ? Collections.emptyList()
                            : Collections.singletonList(latest.handle),
                    latest == null ? Map.of() : latest.state);
        }

        /** Registers checkpoint {@code id} and subsumes the oldest, as the coordinator does. */
        void complete(
                Attempt attempt,
                long id,
                SnapshotResult<KeyedStateHandle> result,
                Map<Integer, Long> state)
                throws Exception {
            IncrementalRemoteKeyedStateHandle handle =
                    (IncrementalRemoteKeyedStateHandle) result.getJobManagerOwnedSnapshot();
            registry.registerAll(Collections.singletonList(handle), id);
            retained.addLast(new Completed(id, handle, new TreeMap<>(state)));
            while (retained.size() > numRetained) {
                retained.removeFirst().handle.discardState();
            }
            registry.unregisterUnusedState(retained.getFirst().id);
            attempt.backend.notifyCheckpointComplete(id);
        }

        Set<String> retainedFiles() {
            Set<String> files = new TreeSet<>();
            retained.forEach(r -> files.addAll(filesOf(r)));
            return files;
        }

        /**
         * After the last of {@code crashed} died, a new attempt restores the latest retained
         * checkpoint and sweeps, which must leave of the crashed attempts only files that retained
         * checkpoints refer to; it completes checkpoints {@code from} to {@code to} and ends, when
         * the log must hold exactly the retained checkpoints' files, each of which must restore
         * exactly. Returns the files the sweep deleted.
         */
        int recoverAndEnd(long from, long to, Attempt... crashed) throws Exception {
            Attempt next = start(crashed[crashed.length - 1]);
            int swept = next.awaitSweep();
            for (Attempt attempt : crashed) {
                assertCrashedFilesOnlyRetained(attempt);
            }
            assertRetainedRestoreExactly();
            next.checkpoints(from, to);
            assertRetainedRestoreExactly();
            next.end();
            assertLogHoldsExactlyTheRetainedFiles();
            return swept;
        }

        /** Restores each retained checkpoint in a job run of its own, which sweeps nothing here. */
        void assertRetainedRestoreExactly() throws Exception {
            for (Completed checkpoint : retained) {
                FaultHarness.assertRestoresExactly(stateBackend(), checkpointDir, checkpoint);
            }
        }

        void assertCrashedFilesOnlyRetained(Attempt crashed) throws IOException {
            Set<String> left = crashed.ownFiles();
            assertThat(retainedFiles())
                    .as("files of the crashed attempt %s left in the log", crashed.writer)
                    .containsAll(left);
        }

        void assertLogHoldsExactlyTheRetainedFiles() throws IOException {
            Set<String> files = logFiles();
            files.removeIf(f -> !f.contains("-r" + graph + "-"));
            assertThat(files).isEqualTo(retainedFiles());
        }
    }

    /** One task attempt: a backend and a model of its state. */
    private final class Attempt {
        final Run run;
        final AppendLogKeyedStateBackend<Integer> backend;
        final ValueState<Long> values;
        final Map<Integer, Long> model = new TreeMap<>();
        /** The backend's id, which its file names carry; known from its first snapshot. */
        String writer;

        Attempt(
                Run run,
                ExecutionAttemptID id,
                List<KeyedStateHandle> handles,
                Map<Integer, Long> restored)
                throws Exception {
            this.run = run;
            this.backend = BackendHarness.build(stateBackend(), handles, id);
            this.values =
                    backend.getPartitionedState(
                            VoidNamespace.INSTANCE,
                            VoidNamespaceSerializer.INSTANCE,
                            FaultHarness.VALUES);
            this.model.putAll(restored);
        }

        void update() throws IOException {
            for (int i = 0; i < KEYS / 2; i++) {
                int key = random.nextInt(KEYS);
                long value = random.nextLong();
                backend.setCurrentKey(key);
                values.update(value);
                model.put(key, value);
            }
        }

        /** Takes snapshot {@code id} and runs its asynchronous phase. */
        SnapshotResult<KeyedStateHandle> snapshot(long id) throws Exception {
            return written(barrier(id));
        }

        /** The synchronous phase of snapshot {@code id}: its asynchronous phase is yet to run. */
        RunnableFuture<SnapshotResult<KeyedStateHandle>> barrier(long id) throws Exception {
            Path dir = new Path(run.checkpointDir);
            return backend.snapshot(
                    id,
                    id,
                    new FsCheckpointStreamFactory(
                            FileSystem.get(URI.create(run.checkpointDir)),
                            new Path(dir, "chk"),
                            new Path(dir, "shared"),
                            0,
                            4096),
                    CheckpointOptions.forCheckpointWithDefaultLocation());
        }

        /** Runs the asynchronous phase of a snapshot. */
        SnapshotResult<KeyedStateHandle> written(
                RunnableFuture<SnapshotResult<KeyedStateHandle>> future) throws Exception {
            future.run();
            IncrementalRemoteKeyedStateHandle handle =
                    (IncrementalRemoteKeyedStateHandle) future.get().getJobManagerOwnedSnapshot();
            writer = handle.getBackendIdentifier().toString();
            return future.get();
        }

        /** Checkpoints {@code from} to {@code to}, each after updates, each completed. */
        void checkpoints(long from, long to) throws Exception {
            for (long id = from; id <= to; id++) {
                update();
                run.complete(this, id, snapshot(id), model);
                BackendHarness.awaitCompaction(backend);
            }
        }

        /**
         * Dies in checkpoint {@code id} after its asynchronous phase wrote the batch, before it
         * completed; nothing is closed.
         */
        void crashDuring(long id) throws Exception {
            update();
            snapshot(id);
            BackendHarness.awaitCompaction(backend);
        }

        int awaitSweep() throws Exception {
            return backend.orphanSweep().get(1, TimeUnit.MINUTES);
        }

        /** Every file in the log. */
        Set<String> files() throws IOException {
            return logFiles();
        }

        /** This attempt's files in the log. */
        Set<String> ownFiles() throws IOException {
            Set<String> files = logFiles();
            files.removeIf(f -> !f.contains(writer));
            return files;
        }

        /** This attempt's files that no retained checkpoint refers to, with their bytes. */
        Map<java.nio.file.Path, byte[]> unreferencedFiles() throws IOException {
            Set<String> retainedFiles = run.retainedFiles();
            Map<java.nio.file.Path, byte[]> files = new TreeMap<>();
            try (Stream<java.nio.file.Path> all = Files.walk(base.resolve("log"))) {
                for (java.nio.file.Path f : (Iterable<java.nio.file.Path>) all::iterator) {
                    String name = f.getFileName().toString();
                    if (Files.isRegularFile(f) && name.contains(writer) && !retainedFiles.contains(name)) {
                        files.put(f, Files.readAllBytes(f));
                    }
                }
            }
            return files;
        }

        /** The job's end: the backend is disposed, as on cancel or finish. */
        void end() {
            backend.dispose();
        }
    }
}
