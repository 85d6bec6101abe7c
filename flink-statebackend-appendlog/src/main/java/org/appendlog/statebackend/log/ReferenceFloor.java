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

import java.util.TreeMap;

/**
 * The lowest id of a checkpoint that may refer to a file the log creates now. A checkpoint refers
 * to a file only from its asynchronous phase, so that is the lowest checkpoint whose snapshot
 * started and whose asynchronous phase has not ended, or else the one after the last started:
 * ids grow with the barriers. Each file's name carries the floor at its creation ({@link
 * LogFileName}); a file whose floor is above the latest completed checkpoint is referred to by no
 * completed checkpoint ({@link OrphanSweep}).
 *
 * <p>Only ids of this backend's own snapshots count (not the restored checkpoint's): under Flink's
 * changelog backend they are materialization ids, while restored handles and completion
 * notifications may carry checkpoint ids. So ends come from the snapshot's resources being
 * released, which Flink does when the asynchronous phase ends or is cancelled before it ran.
 * Savepoints write no log file and do not count.
 */
public final class ReferenceFloor {

    private long lastStarted;
    /** Snapshots whose asynchronous phase has not ended, with a count for repeated ids. */
    private final TreeMap<Long, Integer> open = new TreeMap<>();

    /** The synchronous phase of checkpoint {@code id} begins. */
    public synchronized void started(long id) {
        lastStarted = Math.max(lastStarted, id);
        open.merge(id, 1, Integer::sum);
    }

    /** Checkpoint {@code id} refers to no further file: its asynchronous phase ended or never will. */
    public synchronized void ended(long id) {
        open.computeIfPresent(id, (ignored, count) -> count == 1 ? null : count - 1);
    }

    public synchronized long get() {
        return open.isEmpty() ? lastStarted + 1 : open.firstKey();
    }
}
