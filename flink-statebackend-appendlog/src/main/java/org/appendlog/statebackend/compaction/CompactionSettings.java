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
