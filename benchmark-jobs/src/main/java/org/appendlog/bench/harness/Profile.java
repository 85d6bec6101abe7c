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

import org.appendlog.bench.Args;
import org.appendlog.bench.jobs.BenchJob;
import org.appendlog.bench.jobs.JobSpec;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;

/**
 * What one harness run does: the matrix (jobs x backends x storages), the workload and the timing.
 * {@code --quick} gives defaults that finish in under three minutes on two cores; without it the
 * defaults are the full profile (the headline workload of 2 million words). Every default can be
 * overridden by its option.
 */
public final class Profile {

    public static final String USAGE =
            "Harness options (quick / full defaults):\n"
                    + "  --quick                     the quick profile (default: full)\n"
                    + "  --jobs J,..                 wordcount,topk\n"
                    + "  --backends B,..             hashmap,rocksdb,changelog,appendlog,appendlog-nocompact\n"
                    + "  --storages S,..             local,hdfs (any of local, hdfs, hbase)\n"
                    + "  --checkpoint-interval-ms N  same for every configuration (500 / 1000)\n"
                    + "  --run-seconds S             measured run before the failure (1 / 30)\n"
                    + "  --recovery-timeout-seconds S  longest wait for full throughput after it (6 / 120)\n"
                    + "  --inject-failure B          fail once and measure recovery (true)\n"
                    + "  --limits B                  also run checkpointing off and the storage bandwidth (true)\n"
                    + "  --rounds N                  run the whole matrix N times, one pass after the other, and\n"
                    + "                              show each configuration's median throughput (1)\n"
                    + "  --bandwidth-mb N            bytes written by the bandwidth probe (64 / 512)\n"
                    + "  --managed-memory-mb N       Flink managed memory, used by RocksDB (256 / 512)\n"
                    + "  --out DIR                   results folder (results)\n"
                    + "  --work-dir DIR              checkpoints and HDFS data (a new temp folder, deleted after)\n"
                    + "  --flink.<option> V          a Flink configuration option for every configuration, set\n"
                    + "                              after the harness's own (e.g. --flink.state.backend.appendlog.compaction.threads 2)\n"
                    + "Workload options (quick / full defaults: vocabulary 50000 / 2000000,\n"
                    + "window-records 50000 / 1000000; --records is ignored: runs are timed):\n"
                    + JobSpec.USAGE;

    public final boolean quick;
    public final List<BenchJob> jobs = new ArrayList<>();
    public final List<Backend> backends = new ArrayList<>();
    public final List<String> storages = new ArrayList<>();
    public final JobSpec spec;
    public final long checkpointIntervalMs;
    public final double runSeconds;
    public final double recoveryTimeoutSeconds;
    public final boolean injectFailure;
    public final boolean limits;
    /** How many times the matrix runs; single runs on a shared machine move by a fifth or more. */
    public final int rounds;
    public final int bandwidthMb;
    public final int managedMemoryMb;
    public final File outDir;
    public final File workDir;
    /** Flink configuration given on the command line, applied to every configuration's cluster. */
    public final Map<String, String> flinkOptions;

    public Profile(Args args) {
        quick = args.flag("quick");
        for (String job : args.list("jobs", "wordcount,topk")) {
            jobs.add(BenchJob.named(job));
        }
        for (String backend :
                args.list("backends", "hashmap,rocksdb,changelog,appendlog,appendlog-nocompact")) {
            backends.add(Backend.parse(backend));
        }
        for (String storage : args.list("storages", "local,hdfs")) {
            storages.add(Storages.parse(storage));
        }
        spec = withDefaults(args, quick);
        checkpointIntervalMs = args.longValue("checkpoint-interval-ms", quick ? 500 : 1000);
        runSeconds = args.doubleValue("run-seconds", quick ? 1 : 30);
        recoveryTimeoutSeconds = args.doubleValue("recovery-timeout-seconds", quick ? 6 : 120);
        injectFailure = Boolean.parseBoolean(args.string("inject-failure", "true"));
        limits = Boolean.parseBoolean(args.string("limits", "true"));
        rounds = args.intValue("rounds", 1);
        bandwidthMb = args.intValue("bandwidth-mb", quick ? 64 : 512);
        managedMemoryMb = args.intValue("managed-memory-mb", quick ? 256 : 512);
        outDir = new File(args.string("out", "results"));
        String work = args.string("work-dir", null);
        workDir = work == null ? null : new File(work);
        flinkOptions = args.flinkOptions();
        if (checkpointIntervalMs < 10) {
            throw new IllegalArgumentException("--checkpoint-interval-ms must be at least 10");
        }
        if (rounds < 1) {
            throw new IllegalArgumentException("--rounds must be at least 1, got " + rounds);
        }
        if (runSeconds <= 0 || recoveryTimeoutSeconds <= 0) {
            throw new IllegalArgumentException("--run-seconds and --recovery-timeout-seconds must be positive");
        }
    }

    private static JobSpec withDefaults(Args args, boolean quick) {
        JobSpec given = JobSpec.fromArgs(args, quick ? 50_000 : 2_000_000, 0);
        long windowRecords = args.longValue("window-records", quick ? 50_000 : 1_000_000);
        return new JobSpec(
                        given.generator,
                        0,
                        given.recordsPerSecond,
                        given.parallelism,
                        windowRecords,
                        given.topK);
    }

    public String describe() {
        return (quick ? "quick" : "full")
                + " profile: "
                + spec.generator
                + "; parallelism "
                + spec.parallelism
                + (spec.recordsPerSecond > 0 ? ", " + (long) spec.recordsPerSecond + " records/s" : ", unthrottled")
                + "; checkpoint every "
                + checkpointIntervalMs
                + " ms; "
                + runSeconds
                + " s measured run"
                + (injectFailure ? ", then one injected failure" : "")
                + (rounds > 1 ? "; " + rounds + " rounds" : "")
                + "; TopK windows of "
                + spec.windowRecords
                + " records, top "
                + spec.topK
                + (flinkOptions.isEmpty() ? "" : "; Flink options " + flinkOptions);
    }
}
