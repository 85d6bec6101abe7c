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

package org.appendlog.cec.operator;

import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.log.LogRetention;
import org.appendlog.cec.log.PersistedStream;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

/**
 * A stream of an earlier generation that a subtask keeps pruning after a rescale: old subtask
 * {@code j}'s stream goes to new subtask {@code j mod p}. Nothing appends to it again and no restore
 * of a later generation reads it, so its whole committed range is behind the recovery horizon and
 * only the user retention keeps it.
 */
final class AdoptedStream {

    /** Where the stream was committed when the rescale restored it. */
    final CheckpointedPosition position;
    final LogRetention retention;

    AdoptedStream(CheckpointedPosition position, FileSystem fs, CecOptions options) {
        this.position = position;
        Path directory = PersistedStream.subtaskDirectory(options.logPath(), position.generation, position.subtask);
        this.retention = new LogRetention(fs, directory, options.retentionMillis(), options.retentionBytes());
    }
}
