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

import org.appendlog.cec.log.LogPosition;

/** A split being read: where the next record starts. */
final class CecLogSplitState {

    final CecLogSplit split;
    LogPosition next;

    CecLogSplitState(CecLogSplit split) {
        this.split = split;
        this.next = split.resumeAt();
    }

    CecLogSplit toSplit() {
        return next == null ? split : split.resumingAt(next);
    }
}
