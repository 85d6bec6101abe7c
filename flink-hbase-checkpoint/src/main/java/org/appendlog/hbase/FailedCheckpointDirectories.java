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

package org.appendlog.hbase;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.List;

/**
 * The directories of one job's failed checkpoints, remembered on the job manager so that they can
 * be deleted again.
 *
 * <p>A failover aborts the pending checkpoint and deletes its directory at once, while the
 * cancelled tasks wind down. A task's asynchronous snapshot that ends just then still writes its
 * streams, and Flink drops the result without discarding it (it lands in a cancelled future): rows
 * written after the delete would stay for good. Each discard of a completed checkpoint (a
 * subsumed one, and the last ones when the job ends) therefore deletes these directories again.
 * Nothing valid is ever written there: a failed checkpoint's id is not used again.
 *
 * <p>Only the most recent failures are kept, so a sweep stays one bounded scan; the memory is the
 * job manager's, so a job manager that fails over forgets them.
 */
final class FailedCheckpointDirectories {

    private static final Logger LOG = LoggerFactory.getLogger(FailedCheckpointDirectories.class);

    /** A late snapshot comes right after its checkpoint's failure; older ones are let go. */
    private static final int REMEMBERED = 64;

    private final HBaseStorageSettings settings;
    private final ArrayDeque<String> directories = new ArrayDeque<>();

    FailedCheckpointDirectories(HBaseStorageSettings settings) {
        this.settings = settings;
    }

    synchronized void add(String directory) {
        if (directories.size() == REMEMBERED) {
            directories.removeFirst();
        }
        directories.addLast(directory);
    }

    /**
     * Deletes whatever rows reached the remembered directories since they were deleted. A failure
     * is logged, not thrown: it is not the failure of the discard that calls this, and the next
     * discard tries again.
     */
    void sweep() {
        List<String> toSweep;
        synchronized (this) {
            toSweep = new ArrayList<>(directories);
        }
        if (toSweep.isEmpty()) {
            return;
        }
        try {
            int rows = CheckpointTables.open(settings).deleteDirectories(toSweep);
            if (rows > 0) {
                LOG.info(
                        "Deleted {} rows that cancelled tasks wrote into failed checkpoints {}"
                                + " after they were disposed",
                        rows,
                        toSweep);
            }
        } catch (IOException e) {
            LOG.warn(
                    "Could not delete the rows of failed checkpoints {} again; the next discard"
                            + " of a completed checkpoint tries again",
                    toSweep,
                    e);
        }
    }
}
