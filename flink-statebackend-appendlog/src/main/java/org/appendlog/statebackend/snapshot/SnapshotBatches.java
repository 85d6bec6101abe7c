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

import org.appendlog.statebackend.log.BatchLocation;

import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;

import java.util.List;
import java.util.Set;

/**
 * What a snapshot's asynchronous phase wrote before its manifest: the batches the manifest lists,
 * the segments its handle lists as placeholders, its private files, and the bytes it appended.
 */
final class SnapshotBatches {

    final List<BatchLocation> batches;
    /** Segments the handle lists as placeholders, which the JobManager resolves. */
    final Set<String> placeholders;
    /** Files that belong to this snapshot alone (a savepoint's segment). */
    final List<HandleAndLocalPath> privateState;
    final long appended;

    SnapshotBatches(
            List<BatchLocation> batches,
            Set<String> placeholders,
            List<HandleAndLocalPath> privateState,
            long appended) {
        this.batches = batches;
        this.placeholders = placeholders;
        this.privateState = privateState;
        this.appended = appended;
    }
}
