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

import org.apache.flink.runtime.state.InternalKeyContextImpl;
import org.apache.flink.runtime.state.KeyGroupRange;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Which intervals the detector leaves untracked, for a state that turns over in given intervals:
 * T an interval after which the barrier finds the state turned over (if tracked), N one after
 * which it does not, F one whose checkpoint is full anyway and judges nothing. The answer has U
 * for an untracked interval, - for a tracked one. The checkpoints these stand for are in {@code
 * TurnoverCheckpointTest}.
 */
class TurnoverDetectorTest {

    private static final int PROBE = TurnoverDetector.PAUSED_INTERVALS_PER_PROBE;

    private final ChangeTracker tracker =
            new ChangeTracker(
                    new InternalKeyContextImpl<>(KeyGroupRange.of(0, 0), 1), 1 << 20, Runnable::run);
    private final TurnoverDetector detector = new TurnoverDetector(tracker, 1.0, () -> 1);
    private long checkpointId;

    @Test
    void turnoversInARowPauseEveryIntervalButTheProbes() {
        assertThat(untracked("TTT" + "T".repeat(2 * PROBE)))
                .isEqualTo("---" + ("U".repeat(PROBE - 1) + "-").repeat(2));
    }

    @Test
    void alternatingTurnoversPauseTheIntervalsDueToTurnOverButTheProbes() {
        assertThat(untracked("TNTN" + "TN".repeat(2 * PROBE)))
                .isEqualTo("----" + ("U-".repeat(PROBE - 1) + "--").repeat(2));
    }

    @Test
    void anAlternationStartingWithoutTurnoverIsFoundAsSoon() {
        assertThat(untracked("NTNTNTN")).isEqualTo("-----U-");
    }

    /**
     * A window firing an interval late, once the alternation held for a while: that interval's
     * checkpoint is full, and the alternation goes on from the late turnover.
     */
    @Test
    void aLateTurnoverAfterALongAlternationShiftsIt() {
        assertThat(untracked("TNTN" + "TNTN" + "NTNTN")).isEqualTo("----" + "U-U-" + "U--U-");
    }

    /**
     * Windows firing every two and a half intervals: the first expected turnover is wrong, and
     * longer alternations are needed before the next.
     */
    @Test
    void anAlternationWhoseFirstExpectationIsWrongNeedsALongerOneAgain() {
        assertThat(untracked("TNTNN".repeat(4))).isEqualTo("----U" + "-".repeat(15));
        assertThat(untracked("TNTNTN" + "TN")).isEqualTo("-".repeat(6) + "U-");
    }

    /** Windows firing every third interval: nothing is predicted. */
    @Test
    void turnoversEveryThirdIntervalAreTracked() {
        assertThat(untracked("TNN".repeat(6))).isEqualTo("-".repeat(18));
    }

    /** A full checkpoint in between keeps the phase: it counts as expected. */
    @Test
    void aBarrierThatJudgesNothingCountsAsThePatternExpected() {
        assertThat(untracked("TNTN" + "TFTNTF")).isEqualTo("----" + "U-U-U-");
        assertThat(untracked("TFTNTNT")).isEqualTo("U-U-U-U");
    }

    @Test
    void aBarrierThatJudgesNothingTellsNothingWithoutAPattern() {
        assertThat(untracked("TTFT" + "T")).isEqualTo("----" + "U");
    }

    /** Once the state settles, a probe finds out and tracking resumes. */
    @Test
    void aProbeThatFindsNoTurnoverResumesTracking() {
        assertThat(untracked("TTT" + "N".repeat(PROBE + 4)))
                .isEqualTo("---" + "U".repeat(PROBE - 1) + "-----");
        assertThat(untracked("TNTN" + "N".repeat(2 * PROBE + 4)))
                .isEqualTo("----" + "U-".repeat(PROBE - 1) + "------");
    }

    private String untracked(String intervals) {
        StringBuilder untracked = new StringBuilder();
        for (char interval : intervals.toCharArray()) {
            boolean paused = tracker.isPaused();
            untracked.append(paused ? 'U' : '-');
            detector.adjustTracking(
                    ++checkpointId,
                    paused,
                    interval == 'F',
                    !paused && interval == 'T');
        }
        return untracked.toString();
    }
}
