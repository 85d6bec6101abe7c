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
 * waited for a core. The throughput ratio also gets an interval that holds its true median with at
 * least 95 % confidence, from the order statistics alone (no assumption about how the rounds
 * spread), so whether a configuration reaches a target ratio is read from the run, not guessed.
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
                + " checkpointing off in the same round with the interval that holds the true median"
                + " ratio with at least 95 % confidence (from six rounds on); then the same medians"
                + " for the CPU time per record of the whole JVM and of the counting task's"
                + " thread:\n\n");
        t.append("| job | backend | storage | records/s by round | median | median ratio to off "
                + "| 95 % interval of the median ratio "
                + "| CPU µs / record, median | median CPU ratio to off "
                + "| task CPU µs / record, median | median task CPU ratio to off |\n");
        t.append("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|\n");
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
                    "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |\n",
                    first.job,
                    first.backend,
                    first.storage,
                    String.join(", ", perRound),
                    throughput.median(Format::count),
                    throughput.ratio(),
                    throughput.ratioInterval(),
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

        String ratioInterval() {
            double[] interval = medianInterval(ratios);
            return interval == null
                    ? "-"
                    : String.format(Locale.ROOT, "%.2fx-%.2fx", interval[0], interval[1]);
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

    /**
     * The k-th smallest and k-th largest of {@code values}, with k the largest such that both
     * bound the true median with at least 95 % confidence: the median lies below the k-th smallest
     * only if fewer than k of n values fall below it, which has the binomial(n, 1/2) probability
     * of fewer than k successes, and likewise above. Null below six values, where even the
     * smallest and largest bound it with less.
     */
    static double[] medianInterval(List<Double> values) {
        int n = values.size();
        int k = 0;
        // below: P(fewer than k+1 of n fall below the median); each binomial term is computed
        // in log space so that none underflows however many rounds there are
        double logTerm = n * Math.log(0.5);
        double below = 0;
        while (k < n / 2) {
            below += Math.exp(logTerm);
            if (below > 0.025) {
                break;
            }
            k++;
            logTerm += Math.log((n - k + 1) / (double) k);
        }
        if (k == 0) {
            return null;
        }
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        return new double[] {sorted.get(k - 1), sorted.get(n - k)};
    }

    static double median(List<Double> values) {
        List<Double> sorted = new ArrayList<>(values);
        Collections.sort(sorted);
        int middle = sorted.size() / 2;
        return sorted.size() % 2 == 1 ? sorted.get(middle) : (sorted.get(middle - 1) + sorted.get(middle)) / 2;
    }
}
