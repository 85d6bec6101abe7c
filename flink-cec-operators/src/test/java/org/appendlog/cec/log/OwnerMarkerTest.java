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

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.DataOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CyclicBarrier;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;

import static org.assertj.core.api.Assertions.assertThat;

/** Claims of subtask directories on the local file system. */
class OwnerMarkerTest {

    // Ids in age order, so that markers written within one tick of the clock still rank as written.
    private static final OwnerMarker OWNER = new OwnerMarker("aa000000000000000000000000000001", "owner");
    private static final OwnerMarker INTRUDER = new OwnerMarker("bb000000000000000000000000000002", "intruder");

    private final FileSystem fs = FileSystem.getLocalFileSystem();

    @TempDir File tmp;

    @Test
    void aRefusedOperatorOfHigherParallelismLeavesNothingBehind() throws IOException {
        Path root = new Path(tmp.toURI());
        for (int subtask = 0; subtask < 2; subtask++) {
            assertThat(OwnerMarker.claim(fs, root, PersistedStream.subtaskDirectory(root, subtask), OWNER)).isEmpty();
        }

        for (int subtask = 0; subtask < 4; subtask++) {
            assertThat(OwnerMarker.claim(fs, root, PersistedStream.subtaskDirectory(root, subtask), INTRUDER))
                    .as("subtask %d", subtask)
                    .extracting(OwnerMarker::toString)
                    .containsExactly(OWNER.toString());
        }

        assertThat(names(root)).containsExactly("subtask-0000", "subtask-0001");
        for (int subtask = 0; subtask < 2; subtask++) {
            assertThat(names(PersistedStream.subtaskDirectory(root, subtask)))
                    .containsExactly("owner-aa000000000000000000000000000001");
        }
    }

    /**
     * A marker found while it is still empty (created, its owner's name not written yet) is read
     * again until the name is there, so that the refusal names the owner.
     */
    @Test
    void aMarkerFoundBeingWrittenIsReadAgainForItsName() throws Exception {
        Path marker = emptyMarker();
        ExecutorService owner = Executors.newSingleThreadExecutor();
        try {
            Future<?> namesIt =
                    owner.submit(
                            () -> {
                                Thread.sleep(100);
                                try (DataOutputStream out =
                                        new DataOutputStream(
                                                new FileOutputStream(new File(marker.toUri())))) {
                                    out.writeUTF("owner");
                                }
                                return null;
                            });
            assertThat(OwnerMarker.read(fs, fs.getFileStatus(marker)))
                    .hasToString(OWNER.toString());
            namesIt.get();
        } finally {
            owner.shutdownNow();
        }
    }

    /** A marker whose owner died before writing its name still counts, its name unknown. */
    @Test
    void aMarkerLeftEmptyCountsWithItsNameUnknown() throws Exception {
        Path marker = emptyMarker();
        assertThat(OwnerMarker.read(fs, fs.getFileStatus(marker)))
                .hasToString(
                        "operator '(name being written)' (operator id"
                                + " aa000000000000000000000000000001)");
    }

    private Path emptyMarker() throws IOException {
        Path subtask = PersistedStream.subtaskDirectory(new Path(tmp.toURI()), 0);
        fs.mkdirs(subtask);
        Path marker = new Path(subtask, "owner-aa000000000000000000000000000001");
        fs.create(marker, FileSystem.WriteMode.NO_OVERWRITE).close();
        return marker;
    }

    @Test
    void subtasksClaimAnEmptyPathInAnyOrderAndTheOwnerMayAddSubtasks() throws IOException {
        Path root = new Path(tmp.toURI());
        assertThat(OwnerMarker.claim(fs, root, PersistedStream.subtaskDirectory(root, 2), OWNER)).isEmpty();
        assertThat(OwnerMarker.claim(fs, root, PersistedStream.subtaskDirectory(root, 0), OWNER)).isEmpty();
        assertThat(OwnerMarker.claim(fs, root, PersistedStream.subtaskDirectory(root, 3), OWNER)).isEmpty();
        assertThat(OwnerMarker.claim(fs, root, PersistedStream.subtaskDirectory(root, 0), OWNER)).as("a restore of subtask 0").isEmpty();

        assertThat(names(root)).containsExactly("subtask-0000", "subtask-0002", "subtask-0003");
    }

    /**
     * Two operators that claim one directory at the same moment, many times over: never both may
     * own it (they would commit over each other).
     */
    @Test
    void ofTwoOperatorsClaimingAtOnceAtMostOneOwns() throws Exception {
        ExecutorService threads = Executors.newFixedThreadPool(2);
        try {
            for (int attempt = 0; attempt < 2_000; attempt++) {
                Path root = new Path(tmp.toURI().resolve("race-" + attempt + "/"));
                CyclicBarrier start = new CyclicBarrier(2);
                Future<Boolean> owner = threads.submit(() -> owns(root, OWNER, start));
                Future<Boolean> intruder = threads.submit(() -> owns(root, INTRUDER, start));
                assertThat(owner.get() && intruder.get()).as("both own, attempt %d", attempt).isFalse();
            }
        } finally {
            threads.shutdownNow();
        }
    }

    private boolean owns(Path root, OwnerMarker operator, CyclicBarrier start) throws Exception {
        start.await();
        return OwnerMarker.claim(fs, root, PersistedStream.subtaskDirectory(root, 0), operator).isEmpty();
    }

    private List<String> names(Path directory) throws IOException {
        List<String> names = new ArrayList<>();
        for (FileStatus child : DirectoryReads.list(fs, directory).orElseThrow()) {
            names.add(child.getPath().getName());
        }
        names.sort(String::compareTo);
        return names;
    }
}
