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

import org.apache.flink.api.connector.source.SourceSplit;

import javax.annotation.Nullable;

import java.util.Objects;

/**
 * One subtask's persisted stream, to be read from a timestamp on up to its committed end, or
 * following its commits if it has none. {@code resumeAt} is set once a reader checkpointed its
 * progress in the split.
 */
public final class CecLogSplit implements SourceSplit {

    private final String directory;
    @Nullable private final LogPosition committedEnd;
    private final long fromTimestamp;
    @Nullable private final LogPosition resumeAt;

    public CecLogSplit(
            String directory, @Nullable LogPosition committedEnd, long fromTimestamp, @Nullable LogPosition resumeAt) {
        this.directory = Objects.requireNonNull(directory);
        this.committedEnd = committedEnd;
        this.fromTimestamp = fromTimestamp;
        this.resumeAt = resumeAt;
    }

    @Override
    public String splitId() {
        return directory;
    }

    public String directory() {
        return directory;
    }

    /** Where a bounded read ends, or null for a split that follows the stream's commits. */
    @Nullable
    public LogPosition committedEnd() {
        return committedEnd;
    }

    public long fromTimestamp() {
        return fromTimestamp;
    }

    @Nullable
    public LogPosition resumeAt() {
        return resumeAt;
    }

    CecLogSplit resumingAt(LogPosition position) {
        return new CecLogSplit(directory, committedEnd, fromTimestamp, position);
    }

    @Override
    public String toString() {
        return "CecLogSplit{" + directory + (committedEnd == null ? " following commits" : " up to " + committedEnd) + ", from t=" + fromTimestamp
                + (resumeAt == null ? "" : ", resume at " + resumeAt) + "}";
    }
}
