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

import javax.annotation.Nullable;

import java.util.Set;

/**
 * A finished compaction pass: the batches it replaces and the run that holds their live records
 * (null when nothing in them was live). Checkpoints take it up once every replaced batch is still
 * part of the checkpoint they build on.
 */
public final class CompactionResult {

    private final Set<String> replacedBatches;
    @Nullable private final BatchLocation run;

    public CompactionResult(Set<String> replacedBatches, @Nullable BatchLocation run) {
        this.replacedBatches = replacedBatches;
        this.run = run;
    }

    /** Keys ({@link BatchLocation#key()}) of the batches that the run replaces. */
    public Set<String> replacedBatches() {
        return replacedBatches;
    }

    @Nullable
    public BatchLocation run() {
        return run;
    }
}
