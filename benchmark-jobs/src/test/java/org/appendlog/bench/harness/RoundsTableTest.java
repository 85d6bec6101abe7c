package org.appendlog.bench.harness;

import org.junit.jupiter.api.Test;

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
                .contains("| wordcount | off (no checkpoints) | - | 1.00 M, 2.00 M, 1.20 M | 1.20 M | - | - | - | - | - |")
                .contains("| wordcount | appendlog | local | 900.0 k, 1.00 M, 1.14 M | 1.00 M | 0.90x | - | - | - | - |");
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
                .contains("| wordcount | off (no checkpoints) | - | 1.00 M, 1.00 M, 1.00 M | 1.00 M | - | 2.00 | - | 1.00 | - |")
                .contains("| wordcount | appendlog | local | 900.0 k, 900.0 k, 900.0 k | 900.0 k | 0.90x | 2.50 | 1.25x | 1.35 | 1.35x |");
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
                .contains("| wordcount | appendlog | local | 800.0 k, failed | 800.0 k | 0.80x | - | - | - | - |");
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
