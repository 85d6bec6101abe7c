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

package org.appendlog.bench.compaction;

import org.apache.flink.configuration.MemorySize;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/** A small sweep: every configuration restores exactly (the sweep checks), and compaction works. */
class CompactionSweepTest {

    @Test
    void smallSweepRestoresExactlyAndCompactionShrinksTheLog() throws Exception {
        List<CompactionSweep.Result> results =
                new CompactionSweep(3_000, 30, 0.5, MemorySize.parse("32kb"), 5).runAll();
        assertThat(results).hasSize(6);
        CompactionSweep.Result eager = results.get(0);
        CompactionSweep.Result off = results.get(results.size() - 1);
        assertThat(eager.passes).isPositive();
        assertThat(off.passes).isZero();
        assertThat(eager.finalLogMegabytes()).isLessThan(off.finalLogMegabytes());
        assertThat(eager.restoreBytes).isLessThan(off.restoreBytes);
        assertThat(CompactionSweep.table(results)).contains("min-dirty-ratio 0.1", "compaction off");
    }
}
