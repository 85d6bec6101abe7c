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
