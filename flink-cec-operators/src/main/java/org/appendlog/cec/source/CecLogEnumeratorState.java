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

package org.appendlog.cec.source;

import java.util.Collection;
import java.util.List;
import java.util.Set;

/**
 * What the split enumerator of {@link CecLogSource} checkpoints: the splits not assigned yet and,
 * when it follows the stream, the subtask directories it has found (their splits are assigned or
 * pending), so that a restore does not hand a directory out twice.
 */
public final class CecLogEnumeratorState {

    private final List<CecLogSplit> unassigned;
    private final Set<String> discovered;

    CecLogEnumeratorState(Collection<CecLogSplit> unassigned, Collection<String> discovered) {
        this.unassigned = List.copyOf(unassigned);
        this.discovered = Set.copyOf(discovered);
    }

    List<CecLogSplit> unassigned() {
        return unassigned;
    }

    Set<String> discovered() {
        return discovered;
    }
}
