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

package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.tracking.ChangeTracker;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.function.LongSupplier;

/**
 * Judges at each barrier whether the state turned over, so that its checkpoint appends every live
 * entry rather than more changes than there are entries, and pauses tracking in the intervals that
 * the {@link TurnoverPattern} expects to turn over: their checkpoints are full anyway, and
 * logging each write cost the task for nothing. Task thread only.
 */
public final class TurnoverDetector {

    private static final Logger LOG = LoggerFactory.getLogger(TurnoverDetector.class);

    /** Untracked intervals after which one is tracked again, to find out if the state settled. */
    public static final int PAUSED_INTERVALS_PER_PROBE = 8;

    private final ChangeTracker tracker;
    /** Changed entries per live entry above which a checkpoint appends all live entries. */
    private final double fullCheckpointRatio;
    private final LongSupplier liveEntries;
    private final TurnoverPattern pattern = new TurnoverPattern();
    /** Intervals since tracking paused or was last probed. */
    private int pausedIntervals;

    TurnoverDetector(ChangeTracker tracker, double fullCheckpointRatio, LongSupplier liveEntries) {
        this.tracker = tracker;
        this.fullCheckpointRatio = fullCheckpointRatio;
        this.liveEntries = liveEntries;
    }

    /**
     * Whether the changes since the last completed checkpoint (the new capture's and {@code
     * changedBefore} of the pending ones, all of which the next batch would carry) outnumber the
     * live entries by more than the configured ratio: state that turned over, such as windows.
     * Estimated first; counted (deduplicating on the task thread what the background thread has
     * not yet) only if the estimate exceeds the limit, since the estimate is coarse for the last
     * writes, which is all there is when few writes came between two barriers. Not counted if
     * the entries the background thread already deduplicated exceed the limit on their own: the
     * count cannot be lower, and counting is work on the task thread.
     */
    boolean turnedOver(Capture capture, long changedBefore) {
        long live = liveEntries.getAsLong();
        // An infinite ratio means never, with no live entries too (infinity times none is NaN).
        double limit =
                Double.isInfinite(fullCheckpointRatio)
                        ? fullCheckpointRatio
                        : fullCheckpointRatio * live;
        if (changedBefore + capture.changed <= limit
                || (changedBefore + capture.changedAtLeast() <= limit
                        && changedBefore + capture.countChanged() <= limit)) {
            return false;
        }
        LOG.debug(
                "Checkpoint {}: {} entries changed since the last completed checkpoint, more than"
                        + " {} times the {} live entries; it appends all live entries",
                capture.checkpointId,
                changedBefore + capture.changed,
                fullCheckpointRatio,
                live);
        return true;
    }

    /**
     * Pauses tracking for the next interval if the pattern expects it to turn over, but for one
     * interval in {@link #PAUSED_INTERVALS_PER_PROBE}, whose barrier finds out whether the state
     * still does. A barrier that went untracked, or whose checkpoint was full anyway (the last
     * full one had not completed, or changes were lost), judges nothing.
     */
    void adjustTracking(
            long checkpointId, boolean untracked, boolean judgesNothing, boolean turnover) {
        TurnoverPattern.Period before = pattern.period();
        pattern.observe(!untracked && !judgesNothing, untracked, turnover);
        if (pattern.period() != before) {
            logPeriod(checkpointId, pattern.period());
            pausedIntervals = 0;
        }
        if (pattern.dueToTurnOver() && ++pausedIntervals < PAUSED_INTERVALS_PER_PROBE) {
            tracker.pause(pattern.period() == TurnoverPattern.Period.EVERY_SECOND_INTERVAL);
        } else {
            if (pattern.dueToTurnOver()) {
                pausedIntervals = 0;
            }
            tracker.resume();
        }
    }

    private static void logPeriod(long checkpointId, TurnoverPattern.Period period) {
        switch (period) {
            case EVERY_INTERVAL:
                LOG.info(
                        "Checkpoint {}: the state turned over at {} checkpoints in a row; changes"
                                + " are not tracked, and checkpoints append all live entries, until"
                                + " the state settles (tracked for one interval in {})",
                        checkpointId,
                        TurnoverPattern.TURNOVERS_IN_A_ROW,
                        PAUSED_INTERVALS_PER_PROBE);
                break;
            case EVERY_SECOND_INTERVAL:
                LOG.info(
                        "Checkpoint {}: the state turned over at every second checkpoint; changes"
                                + " are not tracked in the intervals due to turn over, whose"
                                + " checkpoints append all live entries, until that changes"
                                + " (tracked for one such interval in {})",
                        checkpointId,
                        PAUSED_INTERVALS_PER_PROBE);
                break;
            default:
                LOG.info(
                        "Checkpoint {}: the state no longer turns over regularly; changes are"
                                + " tracked again",
                        checkpointId);
        }
    }
}
