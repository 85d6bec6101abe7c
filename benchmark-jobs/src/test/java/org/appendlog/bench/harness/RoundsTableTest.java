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

package org.appendlog.bench.harness;

import org.junit.jupiter.api.Test;

import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class RoundsTableTest {

    @Test
    void mediansOfThroughputAndOfTheRatioToOffInTheSameRound() {
        List<RunResult> results = List.of(
                run(1, RunResult.CHECKPOINTING_OFF, "-", 1_000_000),
                run(1, "appendlog", "local", 900_000),
                run(2, RunResult.CHECKPOINTING_OFF, "-", 2_000_000),
                run(2, "appendlog", "local", 1_000_000),
                run(3, RunResult.CHECKPOINTING_OFF, "-", 1_200_000),
                run(3, "appendlog", "local", 1_140_000));

        String table = RoundsTable.table(results);

        // appendlog's throughput median is its own middle value (1.00 M) while the median ratio
        // pairs each run with off in its round: 0.90, 0.50, 0.95 -> 0.90
        assertThat(table)
                .contains("| wordcount | off (no checkpoints) | - | 1.00 M, 2.00 M, 1.20 M | 1.20 M | - | - | - | - | - | - |")
                .contains("| wordcount | appendlog | local | 900.0 k, 1.00 M, 1.14 M | 1.00 M | 0.90x | - | - | - | - | - |");
    }

    @Test
    void cpuPerRecordHasItsMediansAndTheMediansOfItsRatiosToOffInTheSameRound() {
        List<RunResult> results = List.of(
                run(1, RunResult.CHECKPOINTING_OFF, "-", 1_000_000, 2.0, 1.0),
                run(1, "appendlog", "local", 900_000, 2.5, 1.2),
                run(2, RunResult.CHECKPOINTING_OFF, "-", 1_000_000, 1.0, 1.0),
                run(2, "appendlog", "local", 900_000, 3.0, 1.5),
                run(3, RunResult.CHECKPOINTING_OFF, "-", 1_000_000, 2.0, 2.0),
                run(3, "appendlog", "local", 900_000, 2.2, -1));

        // appendlog's CPU median is its middle value (2.50 us) while the ratios pair each run
        // with off in its round: 1.25, 3.00, 1.10 -> 1.25; the task's, measured in two rounds:
        // 1.20 and 1.50 -> 1.35, ratios 1.20 and 1.50 -> 1.35x; off's own ratios are not shown
        assertThat(RoundsTable.table(results))
                .contains("| wordcount | off (no checkpoints) | - | 1.00 M, 1.00 M, 1.00 M | 1.00 M | - | - | 2.00 | - | 1.00 | - |")
                .contains("| wordcount | appendlog | local | 900.0 k, 900.0 k, 900.0 k | 900.0 k | 0.90x | - | 2.50 | 1.25x | 1.35 | 1.35x |");
        assertThat(ResultFiles.table(results))
                .contains("| CPU µs / record | task CPU µs / record |")
                .contains("| wordcount | appendlog | local | **NO** | 900.0 k | 2.50 | 1.20 | ")
                .contains("| wordcount | appendlog | local | **NO** | 900.0 k | 2.20 | - | ");
    }

    @Test
    void aFailedRunIsShownAndLeftOutOfTheMedians() {
        RunResult failed = run(2, "appendlog", "local", -1);
        failed.status = "failed: boom";
        List<RunResult> results = List.of(
                run(1, RunResult.CHECKPOINTING_OFF, "-", 1_000_000),
                run(1, "appendlog", "local", 800_000),
                run(2, RunResult.CHECKPOINTING_OFF, "-", 1_000_000),
                failed);

        assertThat(RoundsTable.table(results))
                .contains("| wordcount | appendlog | local | 800.0 k, failed | 800.0 k | 0.80x | - | - | - | - | - |");
    }

    @Test
    void aSingleRoundHasNoTableAndTheResultTableNoRoundColumn() {
        List<RunResult> results = List.of(run(1, RunResult.CHECKPOINTING_OFF, "-", 1_000_000), run(1, "hashmap", "local", 1));

        assertThat(RoundsTable.table(results)).isEmpty();
        assertThat(ResultFiles.table(results)).doesNotContain("round");
        assertThat(ResultFiles.table(List.of(run(1, "hashmap", "local", 1), run(2, "hashmap", "local", 1))))
                .contains("| round |")
                .contains(" 2 |\n");
    }

    @Test
    void theRatioHasAnIntervalForItsMedianFromSixRoundsOn() {
        List<RunResult> results = new ArrayList<>();
        double[] ratios = {0.70, 0.95, 0.84, 0.80, 1.05, 0.90};
        for (int i = 0; i < ratios.length; i++) {
            results.add(run(i + 1, RunResult.CHECKPOINTING_OFF, "-", 1_000_000));
            results.add(run(i + 1, "appendlog", "local", 1_000_000 * ratios[i]));
        }

        // six rounds: only the smallest and largest ratio bound the median with 95 % (96.9 %)
        assertThat(RoundsTable.table(results)).contains("| 0.87x | 0.70x-1.05x |");
        // five rounds: even those bound it with only 93.8 %
        assertThat(RoundsTable.table(results.subList(0, 10))).contains("| 0.84x | - |");
    }

    @Test
    void theIntervalNarrowsToInnerOrderStatisticsAsRoundsAccumulate() {
        List<Double> ten = List.of(10.0, 1.0, 9.0, 2.0, 8.0, 3.0, 7.0, 4.0, 6.0, 5.0);
        List<Double> twelve = new ArrayList<>(ten);
        twelve.addAll(List.of(11.0, 12.0));
        List<Double> fifty = new ArrayList<>();
        for (int i = 1; i <= 50; i++) {
            fifty.add((double) i);
        }

        // n = 10: P(B(10, 1/2) <= 1) = 1.1 % <= 2.5 % < P(<= 2) = 5.5 %: the 2nd and 9th values
        assertThat(RoundsTable.medianInterval(ten)).containsExactly(2.0, 9.0);
        // n = 12: P(<= 2) = 1.9 % <= 2.5 % < P(<= 3) = 7.3 %: the 3rd and 10th
        assertThat(RoundsTable.medianInterval(twelve)).containsExactly(3.0, 10.0);
        // n = 50: the 18th and 33rd (P(<= 17) = 1.6 %, P(<= 18) = 3.2 %)
        assertThat(RoundsTable.medianInterval(fifty)).containsExactly(18.0, 33.0);
        assertThat(RoundsTable.medianInterval(List.of(1.0, 2.0, 3.0, 4.0, 5.0))).isNull();
        assertThat(RoundsTable.medianInterval(List.of())).isNull();
    }

    @Test
    void evenCountMedianIsTheMeanOfTheMiddleTwo() {
        assertThat(RoundsTable.median(List.of(4.0, 1.0, 3.0, 2.0))).isEqualTo(2.5);
        assertThat(RoundsTable.median(List.of(5.0))).isEqualTo(5.0);
    }

    private static RunResult run(int round, String backend, String storage, double throughput) {
        return run(round, backend, storage, throughput, -1, -1);
    }

    private static RunResult run(
            int round,
            String backend,
            String storage,
            double throughput,
            double cpuMicrosPerRecord,
            double taskCpuMicrosPerRecord) {
        RunResult r = new RunResult("wordcount", backend, storage, round);
        r.throughput = throughput;
        r.cpuMicrosPerRecord = cpuMicrosPerRecord;
        r.taskCpuMicrosPerRecord = taskCpuMicrosPerRecord;
        return r;
    }
}
