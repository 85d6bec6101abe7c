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

package org.appendlog.bench.jobs;

import org.appendlog.bench.generator.WordDistribution;
import org.appendlog.bench.generator.WordGenerator;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

/** Where each job's measured run starts: in its steady state, after the generator's first pass. */
class SteadyStateTest {

    @Test
    void wordCountIsSteadyOnceTheFirstPassWroteEveryKey() {
        assertThat(new RunningWordCount().steadyStateRecords(spec(2_000_000, true, 1_000_000))).isEqualTo(2_000_000);
        assertThat(new RunningWordCount().steadyStateRecords(spec(2_000_000, false, 1_000_000))).isZero();
    }

    @Test
    void topKIsSteadyOnceTheWindowsOfTheFirstPassFired() {
        // the first pass fills windows 0 and 1; all of window 2 processed means both fired
        assertThat(new TopK().steadyStateRecords(spec(2_000_000, true, 1_000_000))).isEqualTo(3_000_000);
        // a window the first pass only partly fills holds its last words
        assertThat(new TopK().steadyStateRecords(spec(2_500_000, true, 1_000_000))).isEqualTo(4_000_000);
        assertThat(new TopK().steadyStateRecords(spec(50_000, true, 50_000))).isEqualTo(100_000);
        assertThat(new TopK().steadyStateRecords(spec(2_000_000, false, 1_000_000))).isZero();
    }

    private static JobSpec spec(int vocabulary, boolean firstPass, long windowRecords) {
        return new JobSpec(
                new WordGenerator(vocabulary, WordDistribution.parse("hotset"), 1.0, 0.1, 0.9, firstPass, 42),
                0,
                0,
                1,
                windowRecords,
                10);
    }
}
