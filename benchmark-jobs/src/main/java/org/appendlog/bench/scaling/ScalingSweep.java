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

package org.appendlog.bench.scaling;

import org.appendlog.bench.Args;
import org.appendlog.bench.harness.ProgressLine;
import org.appendlog.bench.harness.RunResult;
import org.appendlog.bench.harness.Storages;

import org.apache.flink.util.FileUtils;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.stream.Collectors;

/**
 * Checkpoint duration, write speed, index rebuild and recovery against the number of keys and
 * the parallelism, for comparison with the figures of the systems the append-log backend descends
 * from (S4's indexed file backend, ChronoStream). Two parts in one JVM, repetition after
 * repetition (each a whole pass over the points, so every point sees each stretch of the
 * machine's noise about equally):
 *
 * <ul>
 *   <li>{@link CheckpointScaling}: keyed state of {@code --keys} values of {@code --value-bytes}
 *       bytes, outside a job: checkpoint stall and duration, write speed, restore and index rebuild;
 *   <li>{@link RecoveryScaling}: word count over {@code --job-keys} words on a MiniCluster:
 *       Flink's checkpoint statistics and recovery after an injected failure.
 * </ul>
 *
 * <p>Writes {@code results.md} (medians with their range), {@code checkpoint-scaling.csv} and
 * {@code recovery-scaling.csv} (every repetition) to {@code --out}. Exits 1 if a point failed or
 * restored a wrong value.
 */
public final class ScalingSweep {

    static final String MARKDOWN = "results.md";
    static final String CHECKPOINT_CSV = "checkpoint-scaling.csv";
    static final String RECOVERY_CSV = "recovery-scaling.csv";

    private final List<Integer> keys;
    private final List<Integer> jobKeys;
    private final List<Integer> parallelisms;
    private final List<String> backends;
    private final int valueBytes;
    private final int repetitions;
    private final double runSeconds;
    private final File out;
    private final List<String> failures = new ArrayList<>();

    ScalingSweep(Args args) {
        keys = integers(args.list("keys", "250000,1000000,4000000"));
        jobKeys = integers(args.list("job-keys", "250000,1000000,2000000"));
        parallelisms = integers(args.list("parallelism", "1,2"));
        backends = args.list("backends", "hashmap,appendlog");
        valueBytes = args.intValue("value-bytes", 200);
        repetitions = args.intValue("repetitions", 3);
        runSeconds = args.doubleValue("run-seconds", 6);
        out = new File(args.string("out", "results/scaling"));
        if (repetitions < 1) {
            throw new IllegalArgumentException("--repetitions must be at least 1, got " + repetitions);
        }
    }

    public static void main(String[] argv) throws Exception {
        Args args = new Args(argv);
        ScalingSweep sweep;
        try {
            sweep = new ScalingSweep(args);
            args.rejectUnknown();
        } catch (IllegalArgumentException e) {
            System.err.println("scaling sweep: " + e.getMessage());
            System.exit(2);
            return;
        }
        boolean ok = sweep.run("ScalingSweep " + String.join(" ", argv));
        // Flink leaves non-daemon threads behind; the sweep is over
        System.exit(ok ? 0 : 1);
    }

    /** Runs every point {@code --repetitions} times and writes the result files; false if any failed. */
    boolean run(String command) throws Exception {
        long start = System.nanoTime();
        System.out.printf(Locale.ROOT, "scaling sweep: keys %s (values of %d bytes), job keys %s, parallelism %s, backends %s,"
                        + " %d repetitions; JVM heap maximum %d MB%n",
                keys, valueBytes, jobKeys, parallelisms, backends, repetitions, Runtime.getRuntime().maxMemory() >> 20);
        List<Measurement> checkpoints = new ArrayList<>();
        List<Measurement> recoveries = new ArrayList<>();
        Path work = Files.createTempDirectory("scaling-sweep");
        ProgressLine progress = new ProgressLine(System.out);
        try (Storages storages = new Storages(work.toFile())) {
            CheckpointScaling checkpointScaling = new CheckpointScaling(valueBytes);
            RecoveryScaling recoveryScaling = new RecoveryScaling(storages, work.toFile(), progress, runSeconds);
            // the first runs in a fresh JVM measure the JIT compiler, not the backend
            for (String backend : backends) {
                checkpoint(checkpointScaling, backend, Math.min(keys.get(0), 50_000), 1, 0, work);
            }
            recoveryScaling.warmUp(jobKeys.get(0));
            for (int repetition = 1; repetition <= repetitions; repetition++) {
                for (int k : keys) {
                    for (int p : parallelisms) {
                        for (String backend : backends) {
                            checkpoints.add(checkpoint(checkpointScaling, backend, k, p, repetition, work));
                        }
                    }
                }
                for (int k : jobKeys) {
                    for (int p : parallelisms) {
                        for (String backend : backends) {
                            recoveries.add(recovery(recoveryScaling, backend, k, p, repetition));
                        }
                    }
                }
                // after every repetition, so that a sweep cut short leaves what it measured
                String markdown = markdown(command, checkpoints, recoveries, repetition, (System.nanoTime() - start) / 1e9);
                write(markdown, checkpoints, recoveries);
                if (repetition == repetitions) {
                    System.out.println(markdown);
                }
            }
        } finally {
            FileUtils.deleteDirectoryQuietly(work.toFile());
        }
        System.out.println("scaling sweep: wrote " + MARKDOWN + ", " + CHECKPOINT_CSV + " and " + RECOVERY_CSV + " in " + out.getPath());
        return failures.isEmpty();
    }

    private void write(String markdown, List<Measurement> checkpoints, List<Measurement> recoveries) throws Exception {
        Files.createDirectories(out.toPath());
        Files.writeString(out.toPath().resolve(MARKDOWN), markdown);
        Files.writeString(out.toPath().resolve(CHECKPOINT_CSV), ScalingTables.csv(checkpoints, CheckpointScaling.COLUMNS));
        Files.writeString(out.toPath().resolve(RECOVERY_CSV), ScalingTables.csv(recoveries, RecoveryScaling.COLUMNS));
    }

    private Measurement checkpoint(
            CheckpointScaling scaling, String backend, int k, int p, int repetition, Path work) throws Exception {
        String point = String.format(Locale.ROOT, "%s %s, %d keys, parallelism %d",
                repetition == 0 ? "[warm-up, not recorded]" : "[" + repetition + "/" + repetitions + "]", backend, k, p);
        System.out.println(point + ": checkpoints and restore");
        Path dir = Files.createTempDirectory(work, "checkpoints");
        long start = System.nanoTime();
        try {
            Measurement m = scaling.run(backend, k, p, repetition, dir);
            System.out.printf(Locale.ROOT, "%s: %s (%.0f s)%n", point, m.figures, (System.nanoTime() - start) / 1e9);
            return m;
        } catch (Exception e) {
            failures.add(point + ": " + e);
            System.out.println(point + ": failed: " + e);
            return new Measurement(backend, k, p, repetition);
        } finally {
            FileUtils.deleteDirectoryQuietly(dir.toFile());
        }
    }

    private Measurement recovery(RecoveryScaling scaling, String backend, int k, int p, int repetition) {
        String point = String.format(Locale.ROOT, "[%d/%d] word count, %s, %d keys, parallelism %d", repetition, repetitions, backend, k, p);
        Measurement m = new Measurement(backend, k, p, repetition);
        RunResult r = scaling.run(backend, k, p, repetition, m, point);
        if (!r.ran() || !r.verified) {
            failures.add(point + ": " + (r.ran() ? r.verification : r.status));
        }
        return m;
    }

    private String markdown(
            String command, List<Measurement> checkpoints, List<Measurement> recoveries, int done, double seconds) {
        StringBuilder md = new StringBuilder("# Scaling sweep\n\n");
        md.append(String.format(Locale.ROOT,
                "Keys %s with values of %d random bytes (outside a job), word count over %s words (a MiniCluster),"
                        + " parallelism %s, %d of %d repetitions; median (min-max), \"-\" where not measured"
                        + " (a recovery past the 60 s timeout). JVM heap maximum %d MB; the sweep took %.0f s.%n%n",
                keys, valueBytes, jobKeys, parallelisms, done, repetitions,
                Runtime.getRuntime().maxMemory() >> 20, seconds));
        md.append("    ").append(command).append("\n\n");
        md.append("## Checkpoints and restore outside a job\n\n");
        md.append(ScalingTables.markdown(checkpoints, CheckpointScaling.COLUMNS)).append('\n');
        md.append("## Word count: checkpoints and recovery\n\n");
        md.append(ScalingTables.markdown(recoveries, RecoveryScaling.COLUMNS));
        if (!failures.isEmpty()) {
            md.append("\nFailed:\n\n");
            failures.forEach(f -> md.append("- ").append(f).append('\n'));
        }
        return md.toString();
    }

    private static List<Integer> integers(List<String> values) {
        return values.stream().map(Integer::parseInt).collect(Collectors.toList());
    }
}
