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

import org.apache.flink.runtime.state.IterableStateSnapshot;

/**
 * A copy-on-write snapshot of one state table with serializers of its own, so that a full batch
 * can be written in the asynchronous phase while the task keeps changing the table.
 */
final class StateTableSnapshot {

    final int stateId;
    final IterableStateSnapshot<Object, Object, Object> snapshot;
    final Capture.Serializers serializers;

    StateTableSnapshot(
            int stateId,
            IterableStateSnapshot<Object, Object, Object> snapshot,
            Capture.Serializers serializers) {
        this.stateId = stateId;
        this.snapshot = snapshot;
        this.serializers = serializers;
    }

    void release() {
        snapshot.release();
    }
}
