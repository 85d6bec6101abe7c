package org.appendlog.bench.harness;

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The throughput of every configuration in each round of a run with {@code --rounds}, its median,
 * and the median of its ratio to checkpointing off in the same round: a ratio of two runs minutes
 * apart moves by a fifth or more, the median of several pairs much less. The same for the JVM's
 * CPU time per record, which does not count the time a run waited for a core.
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
                + " checkpointing off in the same round; then the JVM's CPU time per record, its"
                + " median and the median of its ratio to off in the same round:\n\n");
        t.append("| job | backend | storage | records/s by round | median | median ratio to off "
                + "| CPU µs / record, median | median CPU ratio to off |\n");
        t.append("|---|---|---|---|---:|---:|---:|---:|\n");
        for (List<RunResult> runs : byConfiguration.values()) {
            RunResult first = runs.get(0);
            List<String> perRound = new ArrayList<>();
            List<Double> throughputs = new ArrayList<>();
            List<Double> ratios = new ArrayList<>();
            List<Double> cpu = new ArrayList<>();
            List<Double> cpuRatios = new ArrayList<>();
            for (RunResult r : runs) {
                perRound.add(r.ran() ? Format.count(r.throughput) : "failed");
                if (r.ran()) {
                    throughputs.add(r.throughput);
                    RunResult off = offInSameRound(results, r);
                    if (off != null && off != r) {
                        ratios.add(r.throughput / off.throughput);
                    }
                    if (r.cpuMicrosPerRecord > 0) {
                        cpu.add(r.cpuMicrosPerRecord);
                        if (off != null && off != r && off.cpuMicrosPerRecord > 0) {
                            cpuRatios.add(r.cpuMicrosPerRecord / off.cpuMicrosPerRecord);
                        }
                    }
                }
            }
            t.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %s | %s | %s | %s | %s |\n",
                    first.job,
                    first.backend,
                    first.storage,
                    String.join(", ", perRound),
                    throughputs.isEmpty() ? "-" : Format.count(median(throughputs)),
                    ratio(ratios),
                    cpu.isEmpty() ? "-" : Format.micros(median(cpu)),
                    ratio(cpuRatios)));
        }
        return t.append('\n').toString();
    }

    private static String ratio(List<Double> ratios) {
        return ratios.isEmpty() ? "-" : String.format(Locale.ROOT, "%.2fx", median(ratios));
    }

    private static RunResult offInSameRound(List<RunResult> results, RunResult run) {
        for (RunResult r : results) {
            if (r.round == run.round
                    && r.job.equals(run.job)
                    && r.backend.equals(RunResult.CHECKPOINTING_OFF)
                    && r.ran()
                    && r.throughput > 0) {
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
