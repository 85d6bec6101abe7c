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

import org.appendlog.bench.jobs.BenchJob;

import org.apache.flink.util.FileUtils;

import java.io.File;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Runs a {@link Profile}'s matrix in this JVM, one configuration after the other (so they never
 * compete for the two cores), after one unrecorded warm-up run per job, as many times as the
 * profile has rounds, then writes the result files.
 */
public final class Harness {

    private final Profile profile;
    private final PrintStream out;

    public Harness(Profile profile, PrintStream out) {
        this.profile = profile;
        this.out = out;
    }

    /** Runs everything; {@code command} is recorded in the Markdown so the run can be repeated. */
    public List<RunResult> run(String command) throws IOException {
        boolean ownWorkDir = profile.workDir == null;
        File workDir = ownWorkDir ? Files.createTempDirectory("appendlog-bench").toFile() : profile.workDir;
        JvmHeap heap = JvmHeap.ofThisJvm();
        out.println("bench: " + profile.describe());
        out.println("bench: " + heap.describe());
        out.println("bench: checkpoints and HDFS data in " + workDir + ", results to " + profile.outDir.getAbsolutePath());
        long start = System.nanoTime();
        List<RunResult> results = new ArrayList<>();
        Map<String, Double> bandwidth = new LinkedHashMap<>();
        ProgressLine progress = new ProgressLine(out);
        int total = profile.rounds
                * profile.jobs.size()
                * (profile.backends.size() * profile.storages.size() + (profile.limits ? 1 : 0));
        try (Storages storages = new Storages(workDir)) {
            ConfigurationRun runner = new ConfigurationRun(profile, storages, workDir, progress);
            // the first run of a job in a fresh JVM measures the JIT compiler, not the backend
            for (BenchJob job : profile.jobs) {
                runner.run(job, null, null, 0, "[warm-up, not recorded]");
            }
            int index = 0;
            // whole passes over the matrix, so that every configuration sees each stretch of the
            // machine's noise about equally
            for (int round = 1; round <= profile.rounds; round++) {
                for (BenchJob job : profile.jobs) {
                    if (profile.limits) {
                        results.add(runner.run(job, null, null, round, position(++index, total)));
                    }
                    for (String storage : profile.storages) {
                        for (Backend backend : profile.backends) {
                            results.add(runner.run(job, backend, storage, round, position(++index, total)));
                        }
                    }
                }
            }
            if (profile.limits) {
                for (String storage : profile.storages) {
                    progress.update("measuring the sequential write bandwidth of " + storage);
                    try {
                        double mbPerSecond = writeBandwidth(storages, storage);
                        bandwidth.put(storage, mbPerSecond);
                        progress.done(String.format(Locale.ROOT, "bandwidth of %s: %.0f MB/s sequential write", storage, mbPerSecond));
                    } catch (IOException e) {
                        // the runs' results are still worth writing; the storage's bandwidth is left out
                        progress.done("bandwidth of " + storage + ": not measured: " + e);
                    }
                }
            }
        } finally {
            if (ownWorkDir) {
                FileUtils.deleteDirectoryQuietly(workDir);
            }
        }
        String description = profile.describe()
                + "; " + heap.describe()
                + String.format(Locale.ROOT, "; the whole run took %.0f s", (System.nanoTime() - start) / 1e9);
        ResultFiles.write(profile.outDir, description, command, results, bandwidth);
        out.println();
        out.println(ResultFiles.table(results));
        out.print(RoundsTable.table(results));
        out.println(HeapBreakdown.table(results));
        out.println("bench: wrote " + new File(profile.outDir, ResultFiles.MARKDOWN).getPath() + ", "
                + ResultFiles.CSV + ", " + ResultFiles.CHECKPOINTS_CSV + ", " + ResultFiles.BANDWIDTH_CSV + ", " + ResultFiles.RECOVERY_CSV + " and "
                + ResultFiles.CHARTS.length
                + " charts in " + profile.outDir.getPath()
                + String.format(Locale.ROOT, " (%.0f s)", (System.nanoTime() - start) / 1e9));
        return results;
    }

    private double writeBandwidth(Storages storages, String storage) throws IOException {
        RunStorage probe = storages.forRun(storage, "bandwidth");
        try {
            return probe.writeBandwidth(profile.bandwidthMb);
        } finally {
            probe.delete();
        }
    }

    private static String position(int index, int total) {
        return "[" + index + "/" + total + "]";
    }
}
