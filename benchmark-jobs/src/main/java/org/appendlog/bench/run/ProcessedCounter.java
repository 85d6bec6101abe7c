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

package org.appendlog.bench.run;

import java.io.Serializable;

/**
 * Counts the records one operator instance processed and reports them to the run's channel in
 * batches (a shared atomic per record would cost more than the state access being measured).
 * Each task deserializes its own copy, so a copy's first record marks when that instance (and,
 * after a failure, the recovered job) started processing.
 */
public final class ProcessedCounter implements Serializable {

    private static final long serialVersionUID = 1L;
    private static final int BATCH = 1024;

    private final String runId;
    private transient RunChannel channel;
    private transient int pending;

    public ProcessedCounter(String runId) {
        this.runId = runId;
    }

    public void count() {
        if (channel == null) {
            channel = RunChannel.of(runId);
            channel.markInstanceFirstRecord(System.nanoTime());
        }
        if (++pending == BATCH) {
            channel.addProcessed(BATCH);
            pending = 0;
        }
    }
}
