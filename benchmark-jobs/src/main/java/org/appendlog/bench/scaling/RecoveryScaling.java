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
import org.appendlog.bench.harness.Backend;
import org.appendlog.bench.harness.ConfigurationRun;
import org.appendlog.bench.harness.Profile;
import org.appendlog.bench.harness.ProgressLine;
import org.appendlog.bench.harness.RunResult;
import org.appendlog.bench.harness.Storages;
import org.appendlog.bench.jobs.BenchJob;

import java.io.File;
import java.util.List;

/**
 * Word count's checkpoints and recovery against the number of keys and the parallelism: the
 * harness's own run of one configuration ({@link ConfigurationRun}, local files, one injected
 * failure), its vocabulary and parallelism set per point. Recovery is from the failure to the
 * first record the restarted job processes, and to full throughput again, as in the harness's
 * recovery tables.
 */
final class RecoveryScaling {

    static final String STATE_MB = "state MB";
    static final String SYNC_P99_MS = "sync p99 ms";
    static final String CKPT_P50_MS = "ckpt p50 ms";
    static final String CKPT_P99_MS = "ckpt p99 ms";
    static final String FIRST_RECORD_MS = "recovery: first record ms";
    static final String FULL_THROUGHPUT_MS = "recovery: full throughput ms";
    static final List<String> COLUMNS =
            List.of(STATE_MB, SYNC_P99_MS, CKPT_P50_MS, CKPT_P99_MS, FIRST_RECORD_MS, FULL_THROUGHPUT_MS);

    private final Storages storages;
    private final File workDir;
    private final ProgressLine progress;
    private final double runSeconds;

    RecoveryScaling(Storages storages, File workDir, ProgressLine progress, double runSeconds) {
        this.storages = storages;
        this.workDir = workDir;
        this.progress = progress;
        this.runSeconds = runSeconds;
    }

    /** One run with checkpointing off, unrecorded: the first run of a JVM measures the JIT compiler. */
    void warmUp(int keys) {
        runner(keys, 1).run(BenchJob.named("wordcount"), null, null, 0, "[warm-up, not recorded]");
    }

    /**
     * Runs word count on {@code backend} once; a run that failed or gave a wrong result has no
     * figures and says why in {@link RunResult#status} or {@link RunResult#verification}.
     */
    RunResult run(String backend, int keys, int parallelism, int repetition, Measurement into, String position) {
        RunResult r =
                runner(keys, parallelism)
                        .run(BenchJob.named("wordcount"), Backend.parse(backend), Storages.LOCAL, repetition, position);
        if (r.ran() && r.verified) {
            putMeasured(into, STATE_MB, r.checkpoints.fullBytesAvg / 1e6);
            putMeasured(into, SYNC_P99_MS, r.checkpoints.syncP99Ms);
            putMeasured(into, CKPT_P50_MS, r.checkpoints.durationP50Ms);
            putMeasured(into, CKPT_P99_MS, r.checkpoints.durationP99Ms);
            putMeasured(into, FIRST_RECORD_MS, r.recoveryFirstRecordMs);
            putMeasured(into, FULL_THROUGHPUT_MS, r.recoveryFullThroughputMs);
        }
        return r;
    }

    /** The harness says -1 for what it did not measure, such as a recovery past its timeout. */
    private static void putMeasured(Measurement into, String column, double value) {
        if (value >= 0) {
            into.put(column, value);
        }
    }

    private ConfigurationRun runner(int keys, int parallelism) {
        Profile profile =
                new Profile(
                        new Args(
                                "--jobs", "wordcount",
                                "--storages", Storages.LOCAL,
                                "--vocabulary", String.valueOf(keys),
                                "--parallelism", String.valueOf(parallelism),
                                "--checkpoint-interval-ms", "1000",
                                "--run-seconds", String.valueOf(runSeconds),
                                "--recovery-timeout-seconds", "60",
                                "--limits", "false"));
        return new ConfigurationRun(profile, storages, workDir, progress);
    }
}
