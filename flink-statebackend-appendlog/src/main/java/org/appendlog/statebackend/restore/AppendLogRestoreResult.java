package org.appendlog.statebackend.restore;

import org.appendlog.statebackend.log.BatchLocation;

import java.util.List;

/** What an {@link AppendLogRestoreOperation} restored, and what the first checkpoint builds on. */
public final class AppendLogRestoreResult {

    private final List<BatchLocation> batches;
    private final boolean needsFullCheckpoint;
    private final long bytesRead;
    private final long indexMillis;

    AppendLogRestoreResult(
            List<BatchLocation> batches,
            boolean needsFullCheckpoint,
            long bytesRead,
            long indexMillis) {
        this.batches = batches;
        this.needsFullCheckpoint = needsFullCheckpoint;
        this.bytesRead = bytesRead;
        this.indexMillis = indexMillis;
    }

    /** The batches that later checkpoints build on. */
    public List<BatchLocation> batches() {
        return batches;
    }

    /** Whether checkpoints are full until one of them completes. */
    public boolean needsFullCheckpoint() {
        return needsFullCheckpoint;
    }

    /** Record bytes read from the log. */
    public long bytesRead() {
        return bytesRead;
    }

    /** Milliseconds the restore threads spent rebuilding the index, summed over them. */
    public long indexMillis() {
        return indexMillis;
    }
}
