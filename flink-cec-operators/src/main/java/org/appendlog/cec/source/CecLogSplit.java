package org.appendlog.cec.source;

import org.appendlog.cec.log.LogPosition;

import org.apache.flink.api.connector.source.SourceSplit;

import javax.annotation.Nullable;

import java.util.Objects;

/**
 * One subtask's persisted stream, to be read up to its committed end from a timestamp on. {@code
 * resumeAt} is set once a reader checkpointed its progress in the split.
 */
public final class CecLogSplit implements SourceSplit {

    private final String directory;
    private final LogPosition committedEnd;
    private final long fromTimestamp;
    @Nullable private final LogPosition resumeAt;

    public CecLogSplit(
            String directory, LogPosition committedEnd, long fromTimestamp, @Nullable LogPosition resumeAt) {
        this.directory = Objects.requireNonNull(directory);
        this.committedEnd = Objects.requireNonNull(committedEnd);
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
        return "CecLogSplit{" + directory + " up to " + committedEnd + ", from t=" + fromTimestamp
                + (resumeAt == null ? "" : ", resume at " + resumeAt) + "}";
    }
}
