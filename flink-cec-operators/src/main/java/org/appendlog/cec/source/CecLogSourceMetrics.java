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

/** The names of the metrics {@link CecLogSource} registers in its source reader's metric group. */
public final class CecLogSourceMetrics {

    /**
     * Committed bytes of the persisted stream that the reader has not returned yet, over its
     * splits, measured against the newest commit it has seen (a following reader reads the
     * commit markers again at least every {@link CecLogSplitReader#POLL_MILLIS} ms). 0 when it
     * has caught up. Also reported as Flink's standard {@code pendingBytes}.
     */
    public static final String LAG_BYTES = "cecLogSourceLagBytes";

    private CecLogSourceMetrics() {}
}
