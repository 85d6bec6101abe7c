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

package org.appendlog.cec.bench;

import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.operator.CecMetrics;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

/**
 * The speed target: eventual CEC against Flink's {@code WindowOperator} on {@code hashmap} on the
 * sliding word count with one failure, same job and checkpoint interval. Each round runs both,
 * in alternating order, and takes the ratios within the round (throughput: events per second of
 * wall time, failure and recovery included; time from failure to caught-up, see {@link
 * FailOnce}); the summary gives their medians with a 95 % percentile-bootstrap interval. The
 * absolute figures of a shared machine drift from round to round, the ratios much less.
 *
 * <p>Arguments: {@code --rounds 5}, {@code --period-ms 60000} and {@code --threshold-ms 60000}
 * (the policy's T and H, in event time, which this source advances 30 s or more per second), the
 * word count's arguments ({@link CecBenchmark}).
 */
final class SpeedTarget {

    private final BenchArgs args;
    private final CecBenchmark wordCount;

    SpeedTarget(BenchArgs args, BenchCluster cluster) {
        this.args = args;
        this.wordCount = new CecBenchmark(args, cluster);
    }

    void run() throws Exception {
        int rounds = args.intValue("rounds", 5);
        long t = args.longValue("period-ms", 60_000);
        long h = args.longValue("threshold-ms", 60_000);
        CecOptions.Builder options = CecOptions.builder("").period(Duration.ofMillis(t)).slowThreshold(Duration.ofMillis(h));
        if (args.flag("warm-up", true)) {
            wordCount.runCec(options, false);
            wordCount.runWindowOperator("hashmap", false);
        }
        MarkdownTable table = new MarkdownTable(
                String.format(
                        "Speed target: %s, Flink checkpoint every %d ms, one failure after %s of the input; CEC eventual"
                                + " T = %d ms, H = %d ms (event time) against WindowOperator/hashmap",
                        wordCount.description(), wordCount.checkpointMillis(), args.string("fail-at", "0.7"), t, h),
                "round", "first", "CEC ev/s", "WindowOperator ev/s", "throughput ratio", "CEC caught-up ms",
                "WindowOperator caught-up ms", "caught-up ratio", "CEC CHECKs / event", "CEC records scanned");
        List<Double> throughput = new ArrayList<>();
        List<Double> caughtUp = new ArrayList<>();
        for (int round = 1; round <= rounds; round++) {
            boolean cecFirst = round % 2 == 1;
            BenchRun cec;
            BenchRun baseline;
            if (cecFirst) {
                cec = wordCount.runCec(options, true);
                baseline = wordCount.runWindowOperator("hashmap", true);
            } else {
                baseline = wordCount.runWindowOperator("hashmap", true);
                cec = wordCount.runCec(options, true);
            }
            throughput.add(cec.eventsPerSecond() / baseline.eventsPerSecond());
            caughtUp.add(cec.recoveryMillis / (double) baseline.recoveryMillis);
            table.row(
                    round, cecFirst ? "CEC" : "WindowOperator", MarkdownTable.count(cec.eventsPerSecond()),
                    MarkdownTable.count(baseline.eventsPerSecond()), MarkdownTable.ratio(throughput.get(round - 1)),
                    cec.recoveryMillis, baseline.recoveryMillis, MarkdownTable.ratio(caughtUp.get(round - 1)),
                    MarkdownTable.ratio(cec.counter(CecMetrics.CHECK_TUPLES) / (double) cec.events),
                    cec.gaugeSum(CecMetrics.RECOVERY_RECORDS_SCANNED));
        }
        table.print();
        System.out.printf(
                "%nCEC / WindowOperator over %d rounds: throughput median %s (95 %% interval %s; target >= 0.90),"
                        + " failure to caught-up median %s (95 %% interval %s; target <= 1.00)%n",
                rounds, MarkdownTable.ratio(median(throughput)), interval(throughput),
                MarkdownTable.ratio(median(caughtUp)), interval(caughtUp));
    }

    static double median(List<Double> values) {
        double[] sorted = values.stream().mapToDouble(Double::doubleValue).sorted().toArray();
        int middle = sorted.length / 2;
        return sorted.length % 2 == 1 ? sorted[middle] : (sorted[middle - 1] + sorted[middle]) / 2;
    }

    /** The 2.5 and 97.5 percentiles of the medians of 10 000 resamples (fixed seed: repeatable). */
    static String interval(List<Double> values) {
        Random random = new Random(1);
        double[] medians = new double[10_000];
        List<Double> resample = new ArrayList<>(values.size());
        for (int i = 0; i < medians.length; i++) {
            resample.clear();
            for (int j = 0; j < values.size(); j++) {
                resample.add(values.get(random.nextInt(values.size())));
            }
            medians[i] = median(resample);
        }
        Arrays.sort(medians);
        return MarkdownTable.ratio(medians[249]) + "-" + MarkdownTable.ratio(medians[9749]);
    }
}
