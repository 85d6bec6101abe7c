package org.appendlog.bench.harness;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.function.DoubleFunction;
import java.util.function.ToDoubleFunction;

/**
 * The throughput of every configuration in each round of a run with {@code --rounds}, its median,
 * and the median of its ratio to checkpointing off in the same round: a ratio of two runs minutes
 * apart moves by a fifth or more, the median of several pairs much less. The same for the CPU time
 * per record of the whole JVM and of the counting task's thread, which do not count the time a run
 * waited for a core.
 */
final class RoundsTable {

    private RoundsTable() {}

    /** Whether the results come from more than one round. */
    static boolean repeated(List<RunResult> results) {
        return results.stream().anyMatch(r -> r.round > 1);
    }

    /** The table in Markdown, followed by an empty line; empty when there was only one round. */
    static String table(List<RunResult> results) {
        if (!repeated(results)) {
            return "";
        }
        Map<String, List<RunResult>> byConfiguration = new LinkedHashMap<>();
        for (RunResult r : results) {
            byConfiguration.computeIfAbsent(r.label(), label -> new ArrayList<>()).add(r);
        }
        StringBuilder t = new StringBuilder();
        t.append("Throughput in each round (records/s), its median, and the median of its ratio to"
                + " checkpointing off in the same round; then the same medians for the CPU time"
                + " per record of the whole JVM and of the counting task's thread:\n\n");
        t.append("| job | backend | storage | records/s by round | median | median ratio to off "
                + "| CPU µs / record, median | median CPU ratio to off "
                + "| task CPU µs / record, median | median task CPU ratio to off |\n");
        t.append("|---|---|---|---|---:|---:|---:|---:|---:|---:|\n");
        for (List<RunResult> runs : byConfiguration.values()) {
            RunResult first = runs.get(0);
            List<String> perRound = new ArrayList<>();
            for (RunResult r : runs) {
                perRound.add(r.ran() ? Format.count(r.throughput) : "failed");
            }
            Medians throughput = new Medians(results, runs, r -> r.throughput);
            Medians cpu = new Medians(results, runs, r -> r.cpuMicrosPerRecord);
            Medians taskCpu = new Medians(results, runs, r -> r.taskCpuMicrosPerRecord);
            t.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                    first.job,
                    first.backend,
                    first.storage,
                    String.join(", ", perRound),
                    throughput.median(Format::count),
                    throughput.ratio(),
                    cpu.median(Format::micros),
                    cpu.ratio(),
                    taskCpu.median(Format::micros),
                    taskCpu.ratio()));
        }
        return t.append('\n').toString();
    }

    /**
     * A figure's median over the runs of one configuration that measured it, and the median of
     * its ratio to checkpointing off in the same round.
     */
    private static final class Medians {
        private final List<Double> values = new ArrayList<>();
        private final List<Double> ratios = new ArrayList<>();

        Medians(List<RunResult> results, List<RunResult> runs, ToDoubleFunction<RunResult> figure) {
            for (RunResult r : runs) {
                double value = figure.applyAsDouble(r);
                if (!r.ran() || value <= 0) {
                    continue;
                }
                values.add(value);
                RunResult off = offInSameRound(results, r);
                if (off != null && off != r && figure.applyAsDouble(off) > 0) {
                    ratios.add(value / figure.applyAsDouble(off));
                }
            }
        }

        String median(DoubleFunction<String> format) {
            return values.isEmpty() ? "-" : format.apply(RoundsTable.median(values));
        }

        String ratio() {
            return ratios.isEmpty()
                    ? "-"
                    : String.format(Locale.ROOT, "%.2fx", RoundsTable.median(ratios));
        }
    }

    private static RunResult offInSameRound(List<RunResult> results, RunResult run) {
        for (RunResult r : results) {
            if (r.round == run.round
                    && r.job.equals(run.job)
                    && r.backend.equals(RunResult.CHECKPOINTING_OFF)
                    && r.ran()) {
                return r;
            }
        }
        return null;
    }

    static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }
}
