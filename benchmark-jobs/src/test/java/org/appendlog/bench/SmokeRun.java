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

package org.appendlog.bench;

import org.appendlog.bench.harness.Harness;
import org.appendlog.bench.harness.Profile;
import org.appendlog.bench.harness.RunResult;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One harness run of the smoke tests: the quick profile made smaller (20000 words, 1.5 s measured
 * runs, a 16 MB bandwidth probe) on local files, then the test's own options (later ones win).
 */
final class SmokeRun {

    final List<RunResult> results;
    final String printed;

    private SmokeRun(List<RunResult> results, String printed) {
        this.results = results;
        this.printed = printed;
    }

    static SmokeRun run(Path tmp, String... options) throws Exception {
        List<String> argv = new ArrayList<>(List.of(
                "--quick",
                "--storages", "local",
                "--vocabulary", "20000",
                "--window-records", "50000",
                "--run-seconds", "1.5",
                "--bandwidth-mb", "16",
                "--work-dir", tmp.resolve("work").toString()));
        argv.addAll(List.of(options));
        Args args = new Args(argv.toArray(new String[0]));
        Profile profile = new Profile(args);
        args.rejectUnknown();
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        List<RunResult> results =
                new Harness(profile, new PrintStream(console, true, StandardCharsets.UTF_8)).run("bench (smoke test)");
        return new SmokeRun(results, console.toString(StandardCharsets.UTF_8));
    }

    /**
     * Every run is ok, verified (exact result after the injected failure) and measured: throughput,
     * completed checkpoints, bytes seen on the storage, recovery.
     */
    void assertMeasuredAndVerified() {
        for (RunResult r : results) {
            assertThat(r.status).as(r.label() + "\n" + printed).isEqualTo("ok");
            assertThat(r.verified).as(r.label() + ": " + r.verification).isTrue();
            assertThat(r.verification).startsWith("VERIFIED");
            assertThat(r.throughput).as(r.label()).isPositive();
            assertThat(r.recordsProcessed).as(r.label()).isPositive();
            // the JVM's CPU time per record, which its cores bound over the same window
            assertThat(r.cpuMicrosPerRecord)
                    .as(r.label())
                    .isPositive()
                    .isLessThanOrEqualTo(Runtime.getRuntime().availableProcessors() * 1e6 / r.throughput * 1.1);
            // the counting task's thread: part of the JVM's, and one thread, so at most one core
            assertThat(r.taskCpuMicrosPerRecord)
                    .as(r.label())
                    .isPositive()
                    .isLessThanOrEqualTo(r.cpuMicrosPerRecord)
                    .isLessThanOrEqualTo(1e6 / r.throughput * 1.1);
            if (r.backend.equals(RunResult.CHECKPOINTING_OFF)) {
                assertThat(r.checkpoints.completed).isZero();
                continue;
            }
            assertThat(r.checkpoints.completed).as(r.label()).isPositive();
            assertThat(r.checkpoints.durationP99Ms).as(r.label()).isGreaterThanOrEqualTo(r.checkpoints.durationP50Ms);
            // each checkpoint's start delay is part of its duration
            assertThat(r.checkpoints.startDelayP99Ms).as(r.label()).isBetween(0L, r.checkpoints.durationP99Ms);
            assertThat(r.checkpoints.fullBytesAvg).as(r.label()).isPositive();
            assertThat(r.storageBytesWritten).as(r.label()).isPositive();
            // the injected failure happened and the restarted job processed records again
            assertThat(r.recoveryFirstRecordMs).as(r.label()).isPositive();
        }
    }
}
