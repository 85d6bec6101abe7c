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

package org.appendlog.statebackend.log;

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.KeyGroupRange;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CompletableFuture;

/**
 * Deletes the files that crashed attempts of this subtask left and that no completed checkpoint
 * refers to; a clean close deletes its own ({@link SegmentedLog#close}), a crash leaves them.
 * Runs once after a restore, on a thread of its own.
 *
 * <p>After a failover the backend restores the run's latest completed checkpoint C. A file of the
 * same run and key groups, by another writer, is an orphan if its writer is not in C's {@link
 * WriterLineage} (that writer completed no checkpoint), or if its floor is above the id of its
 * writer's last snapshot in the lineage (every snapshot that may refer to it came later, and
 * none of them completed); for C's own writer also if its floor is C's id and C does not refer to
 * it (C is then the only completed checkpoint that could). Everything else stays: files that C or an older retained checkpoint
 * may refer to belong to Flink's shared state registry, which deletes them once unused. Files of other runs (an earlier submission of the same job id, or
 * before a JobManager failover) and of other key-group ranges (before a rescale) are never
 * touched: this backend cannot know what their checkpoints refer to.
 */
public final class OrphanSweep {

    private static final Logger LOG = LoggerFactory.getLogger(OrphanSweep.class);

    private final FileSystem fs;
    private final Path dir;
    private final KeyGroupRange keyGroups;
    private final String run;
    private final UUID self;
    private final WriterLineage restoredLineage;
    private final UUID restoredWriter;
    private final Set<String> restoredSegments;

    /**
     * @param restoredLineage the restored checkpoint's writers, {@link WriterLineage#NONE} if the
     *     backend restored nothing
     * @param restoredWriter the backend that wrote the restored checkpoint, null if none
     * @param restoredSegments the files its handle lists, which stay whatever their names say
     */
    public OrphanSweep(
            FileSystem fs,
            Path dir,
            KeyGroupRange keyGroups,
            String run,
            UUID self,
            WriterLineage restoredLineage,
            UUID restoredWriter,
            Set<String> restoredSegments) {
        this.fs = fs;
        this.dir = dir;
        this.keyGroups = keyGroups;
        this.run = run;
        this.self = self;
        this.restoredLineage = restoredLineage;
        this.restoredWriter = restoredWriter;
        this.restoredSegments = restoredSegments;
    }

    /** Starts the sweep on a daemon thread; the future holds the number of files deleted. */
    public CompletableFuture<Integer> start() {
        CompletableFuture<Integer> done = new CompletableFuture<>();
        Thread thread =
                new Thread(
                        () -> {
                            try {
                                done.complete(sweep());
                            } catch (Throwable t) {
                                LOG.warn("Could not sweep orphaned state log files in {}", dir, t);
                                done.completeExceptionally(t);
                            }
                        },
                        "appendlog-orphan-sweep " + keyGroups);
        thread.setDaemon(true);
        thread.start();
        return done;
    }

    int sweep() throws IOException {
        FileStatus[] files = fs.listStatus(dir);
        int deleted = 0;
        for (FileStatus file : files == null ? new FileStatus[0] : files) {
            String name = file.getPath().getName();
            String reason = orphanReason(name);
            if (reason == null) {
                continue;
            }
            if (fs.delete(file.getPath(), false)) {
                deleted++;
                LOG.info("Deleted orphaned state log file {}: {}", file.getPath(), reason);
            }
        }
        LOG.info(
                "Swept {} orphaned state log file(s) of key groups {} in {} after the restore",
                deleted,
                keyGroups,
                dir);
        return deleted;
    }

    /** Why the file is an orphan, or null if it may be needed or is not this sweep's to judge. */
    String orphanReason(String name) {
        LogFileName file = LogFileName.parse(name);
        if (file == null
                || !file.keyGroups().equals(keyGroups)
                || !file.run().equals(run)
                || file.writer().equals(self.toString())
                || restoredSegments.contains(name)) {
            return null;
        }
        UUID writer = UUID.fromString(file.writer());
        Long last = run.equals(restoredLineage.run()) ? restoredLineage.lastId(writer) : null;
        if (last == null) {
            return "its writer completed no checkpoint that the restored one descends from";
        }
        if (file.floor() > last) {
            return "written for checkpoint " + file.floor() + " or later, after its writer's"
                    + " last checkpoint " + last + " that the restored one descends from";
        }
        if (file.floor() == last && writer.equals(restoredWriter)) {
            return "written for the restored checkpoint " + last + " or later, which does not"
                    + " refer to it";
        }
        return null;
    }
}
