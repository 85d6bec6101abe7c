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
