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

package org.appendlog.statebackend.snapshot;

import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.SnapshotResources;

import java.util.List;

/** What the synchronous phase of a snapshot hands to the asynchronous one. */
public final class AppendLogSnapshotResources implements SnapshotResources {

    /** How a checkpoint is written. */
    enum Mode {
        /** Only the entries changed since the last completed checkpoint, appended to the log. */
        INCREMENTAL,
        /** All entries, appended to the log; refers to no earlier batch (NO_CLAIM, first after restore from another format). */
        FULL,
        /**
         * Taken while a full checkpoint is pending: the changes since that one's barrier,
         * appended on its log if it was written by then, else all entries.
         */
        AFTER_PENDING_FULL,
        /** All entries, into a self-contained file of the savepoint (native savepoint format). */
        SAVEPOINT
    }

    final long checkpointId;
    final Mode mode;
    final KeyedBackendSerializationProxy<?> metadata;
    final TimerFormat.Captured timers;
    final List<String> stateNames;
    /** Set for {@link Mode#INCREMENTAL} and {@link Mode#AFTER_PENDING_FULL}. */
    final Capture capture;
    /** Set for all modes but {@link Mode#INCREMENTAL}. */
    final List<StateTableSnapshot> tables;
    /** For {@link Mode#AFTER_PENDING_FULL}: the full checkpoint its barrier found pending. */
    final long pendingFull;
    /** Run once, when Flink releases the resources: the asynchronous phase ended or never will. */
    private Runnable onRelease = () -> {};

    AppendLogSnapshotResources(
            long checkpointId,
            Mode mode,
            KeyedBackendSerializationProxy<?> metadata,
            TimerFormat.Captured timers,
            List<String> stateNames,
            Capture capture,
            List<StateTableSnapshot> tables,
            long pendingFull) {
        this.checkpointId = checkpointId;
        this.mode = mode;
        this.metadata = metadata;
        this.timers = timers;
        this.stateNames = stateNames;
        this.capture = capture;
        this.tables = tables;
        this.pendingFull = pendingFull;
    }

    boolean hasNoState() {
        return metadata == null;
    }

    void whenReleased(Runnable action) {
        onRelease = action;
    }

    @Override
    public void release() {
        onRelease.run();
        if (tables != null) {
            tables.forEach(StateTableSnapshot::release);
        }
    }
}
