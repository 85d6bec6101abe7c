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

import org.apache.flink.api.connector.source.SplitEnumerator;
import org.apache.flink.api.connector.source.SplitEnumeratorContext;

import javax.annotation.Nullable;

import java.util.ArrayDeque;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Queue;

/** Hands out one split per persisted subtask stream to readers that ask for work (bounded reads). */
final class CecLogEnumerator implements SplitEnumerator<CecLogSplit, CecLogEnumeratorState> {

    private final SplitEnumeratorContext<CecLogSplit> context;
    private final Queue<CecLogSplit> remaining;

    CecLogEnumerator(SplitEnumeratorContext<CecLogSplit> context, Collection<CecLogSplit> splits) {
        this.context = context;
        this.remaining = new ArrayDeque<>(splits);
    }

    @Override
    public void start() {}

    @Override
    public void handleSplitRequest(int subtaskId, @Nullable String requesterHostname) {
        CecLogSplit next = remaining.poll();
        if (next != null) {
            context.assignSplit(next, subtaskId);
        } else {
            context.signalNoMoreSplits(subtaskId);
        }
    }

    @Override
    public void addSplitsBack(List<CecLogSplit> splits, int subtaskId) {
        remaining.addAll(splits);
    }

    @Override
    public void addReader(int subtaskId) {}

    @Override
    public CecLogEnumeratorState snapshotState(long checkpointId) {
        return new CecLogEnumeratorState(remaining, Collections.emptySet());
    }

    @Override
    public void close() {}
}
