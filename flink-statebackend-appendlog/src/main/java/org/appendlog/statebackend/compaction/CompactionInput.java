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

import org.appendlog.statebackend.log.BatchLocation;

import java.util.List;
import java.util.Map;

/**
 * What a compaction pass needs from the task thread, taken there at one moment: the batches the
 * current checkpoint consists of, and the states' ids. Entries are told apart by their
 * serialized key and namespace, so the pass needs no serializer.
 */
public final class CompactionInput {

    final List<BatchLocation> batches;
    /** Per state name: its id in this backend. */
    final Map<String, Integer> stateIds;
    /** State names by id: the run's state table. */
    final List<String> stateNames;

    public CompactionInput(
            List<BatchLocation> batches, Map<String, Integer> stateIds, List<String> stateNames) {
        this.batches = batches;
        this.stateIds = stateIds;
        this.stateNames = stateNames;
    }
}
