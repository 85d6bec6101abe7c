package org.appendlog.statebackend;

import org.apache.flink.configuration.ReadableConfig;

import java.io.Serializable;
import java.time.Duration;

/** The validated {@code state.backend.appendlog.compaction.*} options. */
public final class CompactionSettings implements Serializable {

    private static final long serialVersionUID = 1L;

    private final boolean enabled;
    private final double minDirtyRatio;
    private final Duration minLag;
    private final long ioRateLimit;
    private final int threads;
    private final int maxSegments;

    public CompactionSettings(
            boolean enabled,
            double minDirtyRatio,
            Duration minLag,
            long ioRateLimit,
            int threads,
            int maxSegments) {
        this.enabled = enabled;
        this.minDirtyRatio = minDirtyRatio;
        this.minLag = minLag;
        this.ioRateLimit = ioRateLimit;
        this.threads = threads;
        this.maxSegments = maxSegments;
    }

    static CompactionSettings fromConfig(ReadableConfig config) {
        boolean enabled = AppendLogSettings.read(config, AppendLogOptions.COMPACTION_ENABLED);
        double ratio = AppendLogSettings.read(config, AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO);
        if (!(ratio > 0 && ratio <= 1)) {
            throw AppendLogSettings.invalid(
                    AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO.key(),
                    "must be greater than 0 and at most 1, was " + ratio);
        }
        Duration lag = AppendLogSettings.read(config, AppendLogOptions.COMPACTION_MIN_LAG);
        if (lag.isNegative()) {
            throw AppendLogSettings.invalid(
                    AppendLogOptions.COMPACTION_MIN_LAG.key(), "must not be negative, was " + lag);
        }
        long rate =
                AppendLogSettings.read(config, AppendLogOptions.COMPACTION_IO_RATE_LIMIT)
                        .getBytes();
        int threads = AppendLogSettings.atLeastOne(config, AppendLogOptions.COMPACTION_THREADS);
        int maxSegments = AppendLogSettings.read(config, AppendLogOptions.COMPACTION_MAX_SEGMENTS);
        if (maxSegments < 2) {
            throw AppendLogSettings.invalid(
                    AppendLogOptions.COMPACTION_MAX_SEGMENTS.key(),
                    "must be at least 2, was " + maxSegments);
        }
        return new CompactionSettings(enabled, ratio, lag, rate, threads, maxSegments);
    }

    public boolean enabled() {
        return enabled;
    }

    public double minDirtyRatio() {
        return minDirtyRatio;
    }

    public Duration minLag() {
        return minLag;
    }

    /** Bytes per second; 0 for unlimited. */
    public long ioRateLimit() {
        return ioRateLimit;
    }

    public int threads() {
        return threads;
    }

    /** With sealed segments, how many segments a checkpoint may refer to before they are merged. */
    public int maxSegments() {
        return maxSegments;
    }

    @Override
    public String toString() {
        return enabled
                ? "min-dirty-ratio=" + minDirtyRatio + ", min-lag=" + minLag + ", io-rate-limit="
                        + ioRateLimit + ", threads=" + threads + ", max-segments=" + maxSegments
                : "disabled";
    }
}
