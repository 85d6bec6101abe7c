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

import org.appendlog.bench.harness.RunResult;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;

import java.awt.image.BufferedImage;
import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CI smoke test of the harness: the smallest part of the quick profile. WordCount on {@code
 * hashmap} and {@code appendlog} over local files plus the checkpointing-off limit and the
 * bandwidth probe; TopK (windows and timers) on both. Every run has an injected failure and must produce a
 * verified result, real measurements and all result files.
 */
class BenchSmokeTest {

    @TempDir Path tmp;

    @Test
    void wordCountOnHashmapAndAppendlogVerifiesAndWritesAllResultFiles() throws Exception {
        File out = tmp.resolve("wordcount").toFile();
        SmokeRun run = SmokeRun.run(tmp, "--jobs", "wordcount", "--backends", "hashmap,appendlog", "--out", out.getPath());

        // checkpointing off, hashmap, appendlog
        assertThat(run.results).hasSize(3);
        run.assertMeasuredAndVerified();
        assertThat(run.printed).contains("[3/3]").contains("bandwidth of local");

        List<String> csv = Files.readAllLines(new File(out, "results.csv").toPath());
        assertThat(csv).hasSize(4);
        assertThat(csv.get(0)).startsWith("job,backend,storage,status,verified,");
        assertThat(csv.subList(1, 4)).allSatisfy(line -> assertThat(line).contains(",ok,true,"));
        assertThat(Files.readAllLines(new File(out, "bandwidth.csv").toPath())).hasSize(2);
        assertCheckpointRows(new File(out, "checkpoints.csv"), run.results);

        String markdown = Files.readString(new File(out, "results.md").toPath());
        assertThat(markdown)
                .contains("| job | backend | storage | verified |")
                .contains("| wordcount | off (no checkpoints) | - | yes |")
                .contains("| wordcount | hashmap | local | yes |")
                .contains("| wordcount | appendlog | local | yes |")
                .contains("![throughput.png](throughput.png)");
        for (String chart :
                new String[] {"throughput.png", "checkpoint-duration.png", "checkpoint-bytes.png", "recovery.png"}) {
            BufferedImage image = ImageIO.read(new File(out, chart));
            assertThat(image).as(chart).isNotNull();
            assertThat(image.getWidth()).isGreaterThan(500);
            assertThat(image.getHeight()).isGreaterThan(100);
        }
    }

    @Test
    void topKVerifiesEveryWindowAfterTheFailure() throws Exception {
        File out = tmp.resolve("topk").toFile();
        Path logDir = tmp.resolve("appendlog-dir-from-the-command-line");
        String logUri = logDir.toUri().toString();
        SmokeRun run =
                SmokeRun.run(
                        tmp, "--jobs", "topk", "--backends", "hashmap,appendlog", "--limits", "false", "--out",
                        out.getPath(), "--flink.state.backend.appendlog.dir", logUri);

        assertThat(run.results).hasSize(2);
        run.assertMeasuredAndVerified();
        assertThat(run.results.get(0).verification).contains("top-K of every window");
        assertThat(Files.readString(new File(out, "results.md").toPath()))
                .contains("| topk | hashmap | local | yes |")
                .contains("| topk | appendlog | local | yes |");
        assertRecoveryCurves(new File(out, "recovery.csv"), run.results);
        // A --flink option overrides the harness's own setting: the log went where it says. (The
        // segments are gone with the job's checkpoints; the operators' directories stay.)
        assertThat(run.printed).contains("Flink options {state.backend.appendlog.dir=" + logUri + "}");
        try (Stream<Path> files = Files.walk(logDir)) {
            assertThat(files.map(f -> f.getFileName().toString()))
                    .anyMatch(name -> name.startsWith("WindowOperator_"));
        }
    }

    /**
     * A row per completed checkpoint of each run, as many as its figures count, in the order they
     * were triggered, each no shorter than its synchronous part, and the run's p99 one of them.
     */
    private static void assertCheckpointRows(File csv, List<RunResult> results) throws Exception {
        List<String> lines = Files.readAllLines(csv.toPath());
        assertThat(lines.get(0))
                .isEqualTo("job,backend,storage,round,checkpoint_id,triggered_ms,duration_ms,sync_ms,async_ms,"
                        + "start_delay_ms,alignment_ms,incremental_bytes,full_bytes");
        for (RunResult result : results) {
            String prefix = result.job + "," + result.backend + "," + result.storage + "," + result.round + ",";
            List<long[]> rows = new ArrayList<>();
            for (String line : lines.subList(1, lines.size())) {
                if (line.startsWith(prefix)) {
                    rows.add(Stream.of(line.substring(prefix.length()).split(",")).mapToLong(Long::parseLong).toArray());
                }
            }
            assertThat(rows).as(result.label()).hasSize(result.checkpoints.completed);
            for (int i = 0; i < rows.size(); i++) {
                long[] row = rows.get(i);
                assertThat(row[2]).as(result.label()).isGreaterThanOrEqualTo(row[3]);
                assertThat(row[8]).as(result.label()).isPositive();
                if (i > 0) {
                    assertThat(row[0]).isGreaterThan(rows.get(i - 1)[0]);
                    assertThat(row[1]).isGreaterThanOrEqualTo(rows.get(i - 1)[1]);
                }
            }
            if (!rows.isEmpty()) {
                assertThat(rows.stream().mapToLong(row -> row[2]))
                        .as(result.label())
                        .contains(result.checkpoints.durationP99Ms);
            }
        }
    }

    /**
     * Each run's recovery sample by sample, from the failure on: time goes forward, the count
     * never back, and the run's first record after the failure is among the samples.
     */
    private static void assertRecoveryCurves(File csv, List<RunResult> results) throws Exception {
        List<String> lines = Files.readAllLines(csv.toPath());
        assertThat(lines.get(0)).isEqualTo("job,backend,storage,round,ms_since_failure,records_since_failure");
        for (RunResult result : results) {
            String prefix = result.job + "," + result.backend + "," + result.storage + "," + result.round + ",";
            List<long[]> curve = new ArrayList<>();
            for (String line : lines.subList(1, lines.size())) {
                if (line.startsWith(prefix)) {
                    String[] fields = line.substring(prefix.length()).split(",");
                    curve.add(new long[] {Long.parseLong(fields[0]), Long.parseLong(fields[1])});
                }
            }
            assertThat(curve).as(result.label()).isNotEmpty();
            for (int i = 1; i < curve.size(); i++) {
                assertThat(curve.get(i)[0]).isGreaterThan(curve.get(i - 1)[0]);
                assertThat(curve.get(i)[1]).isGreaterThanOrEqualTo(curve.get(i - 1)[1]);
            }
            assertThat(curve.get(0)[0]).isGreaterThanOrEqualTo(0);
            assertThat(curve.get(curve.size() - 1)[0]).isGreaterThanOrEqualTo(result.recoveryFirstRecordMs);
            assertThat(curve.get(curve.size() - 1)[1]).as(result.label()).isPositive();
        }
    }

    @Test
    void roundsRepeatTheMatrixAndShowMedians() throws Exception {
        File out = tmp.resolve("rounds").toFile();
        SmokeRun run = SmokeRun.run(
                tmp, "--jobs", "wordcount", "--backends", "appendlog", "--inject-failure", "false", "--rounds", "2",
                "--out", out.getPath());

        // checkpointing off, then appendlog, once per round
        assertThat(run.results).extracting(r -> r.backend + " " + r.round)
                .containsExactly("off (no checkpoints) 1", "appendlog 1", "off (no checkpoints) 2", "appendlog 2");
        assertThat(run.results).allSatisfy(r -> {
            assertThat(r.verified).as(r.label() + ": " + r.verification).isTrue();
            assertThat(r.throughput).isPositive();
            assertThat(r.cpuMicrosPerRecord).isPositive();
            assertThat(r.taskCpuMicrosPerRecord).isPositive();
        });
        assertThat(run.printed).contains("[4/4]").contains("2 rounds").contains("median ratio to off");
        List<String> csv = Files.readAllLines(new File(out, "results.csv").toPath());
        assertThat(csv.get(0)).endsWith(",round");
        assertThat(csv.subList(1, 5)).extracting(line -> line.substring(line.lastIndexOf(',') + 1))
                .containsExactly("1", "1", "2", "2");
        // two rounds are too few for an interval of the median ratio: its column says "-"
        assertThat(Files.readString(new File(out, "results.md").toPath()))
                .contains("95 % interval of the median ratio")
                .containsPattern("\\| wordcount \\| appendlog \\| local \\| [0-9.]+ [kM]?, [0-9.]+ [kM]? \\| "
                        + "[0-9.]+ [kM]? \\| [0-9]\\.[0-9]{2}x \\| - \\| [0-9]+\\.[0-9]{2} \\| [0-9]\\.[0-9]{2}x \\| "
                        + "[0-9]+\\.[0-9]{2} \\| [0-9]\\.[0-9]{2}x \\|");
    }
}
