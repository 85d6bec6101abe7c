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

/**
 * The pattern in which the state turns over, found in the last intervals, and so whether the next
 * checkpoint interval is due to turn it over: windows turn it over in every interval, or in every
 * second one when they fire about every two checkpoint intervals. An interval that went
 * untracked, or whose checkpoint was full anyway, cannot be judged and counts as expected.
 */
public final class TurnoverPattern {

    /** Turnovers in a row after which every interval is expected to turn over. */
    public static final int TURNOVERS_IN_A_ROW = 3;
    /**
     * Alternating intervals after which every second one is expected to turn over: two periods,
     * so that a state turning over once in a while is not taken for one that alternates.
     */
    public static final int ALTERNATIONS = 4;
    /**
     * Alternating intervals needed again after an alternation that ended before any of its expected
     * turnovers was borne out: windows firing every two and a half intervals alternate for four,
     * and every expectation after them was wrong.
     */
    public static final int ALTERNATIONS_AFTER_A_MISS = 6;

    /** How often the state turns over, as the last intervals showed. */
    enum Period {
        NONE,
        EVERY_INTERVAL,
        EVERY_SECOND_INTERVAL
    }

    /** Outcomes that alternate up to a turnover. */
    private static final int ALTERNATING_TO_A_TURNOVER = 0b010101;

    /** The last intervals' outcomes, the latest in bit 0: set if it turned over. */
    private int outcomes;
    /** Intervals in {@link #outcomes}, at most {@link #ALTERNATIONS_AFTER_A_MISS}. */
    private int recorded;

    private Period period = Period.NONE;
    private boolean dueToTurnOver;
    /** Whether tracking paused in the interval before: the next judged one tests the pause. */
    private boolean lastUntracked;
    /** Intervals since the period was found or its alternation restarted. */
    private int intervalsInPhase;
    /** Expected turnovers of this alternation that the tracked interval after them bore out. */
    private int borneOut;
    private int alternationsNeeded = ALTERNATIONS;

    /**
     * Takes the outcome of the next interval: {@code turnover} if it was {@code judged}, else as
     * expected; {@code untracked} if tracking paused in it.
     */
    void observe(boolean judged, boolean untracked, boolean turnover) {
        boolean afterUntracked = lastUntracked && judged;
        lastUntracked = untracked;
        if (!judged && period == Period.NONE) {
            return; // nothing expected of it, and it tells nothing
        }
        boolean turnedOver = judged ? turnover : dueToTurnOver;
        intervalsInPhase++;
        if (period == Period.EVERY_SECOND_INTERVAL && afterUntracked) {
            if (!turnedOver) {
                borneOut++;
            } else if (intervalsInPhase >= ALTERNATIONS) {
                // The windows fired an interval early or late: as if the intervals before had
                // alternated up to this turnover.
                outcomes = ALTERNATING_TO_A_TURNOVER;
                recorded = ALTERNATIONS_AFTER_A_MISS;
                intervalsInPhase = 0;
                dueToTurnOver = false;
                return;
            } else if (borneOut == 0) {
                alternationsNeeded = ALTERNATIONS_AFTER_A_MISS;
            }
        }
        record(turnedOver);
        follow(periodOfOutcomes());
        dueToTurnOver =
                period == Period.EVERY_INTERVAL
                        || (period == Period.EVERY_SECOND_INTERVAL && (outcomes & 1) == 0);
    }

    /** Whether the period found expects the next interval to turn over. */
    boolean dueToTurnOver() {
        return dueToTurnOver;
    }

    Period period() {
        return period;
    }

    private void record(boolean turnedOver) {
        outcomes =
                (outcomes << 1 | (turnedOver ? 1 : 0)) & ((1 << ALTERNATIONS_AFTER_A_MISS) - 1);
        recorded = Math.min(recorded + 1, ALTERNATIONS_AFTER_A_MISS);
    }

    private Period periodOfOutcomes() {
        int inARow = (1 << TURNOVERS_IN_A_ROW) - 1;
        if (recorded >= TURNOVERS_IN_A_ROW && (outcomes & inARow) == inARow) {
            return Period.EVERY_INTERVAL;
        }
        int alternations =
                period == Period.EVERY_SECOND_INTERVAL ? ALTERNATIONS : alternationsNeeded;
        // Each of the last intervals differs from the one before it.
        int changes = (1 << (alternations - 1)) - 1;
        if (recorded >= alternations && ((outcomes ^ outcomes >> 1) & changes) == changes) {
            return Period.EVERY_SECOND_INTERVAL;
        }
        return Period.NONE;
    }

    private void follow(Period found) {
        if (found != period) {
            if (found == Period.EVERY_SECOND_INTERVAL) {
                alternationsNeeded = ALTERNATIONS;
            }
            period = found;
            intervalsInPhase = 0;
            borneOut = 0;
        }
    }
}
