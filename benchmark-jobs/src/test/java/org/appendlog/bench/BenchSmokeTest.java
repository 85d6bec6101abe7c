package org.appendlog.bench;

import org.appendlog.bench.harness.Harness;
import org.appendlog.bench.harness.Profile;
import org.appendlog.bench.harness.RunResult;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import javax.imageio.ImageIO;

import java.awt.image.BufferedImage;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The CI smoke test of the harness: the smallest part of the quick profile (both jobs on {@code
 * hashmap} and {@code appendlog} over local files, plus the checkpointing-off limit and the
 * bandwidth probe), each run with an injected failure, must produce verified results, real
 * measurements and all result files.
 */
class BenchSmokeTest {

    @TempDir Path tmp;

    @Test
    void quickProfileSmallestPartRunsVerifiesAndWritesResults() throws Exception {
        File out = tmp.resolve("results").toFile();
        Args args =
                new Args(
                        "--quick",
                        "--jobs", "wordcount,topk",
                        "--backends", "hashmap,appendlog",
                        "--storages", "local",
                        "--vocabulary", "20000",
                        "--window-records", "50000",
                        "--run-seconds", "1.5",
                        "--bandwidth-mb", "16",
                        "--out", out.getPath(),
                        "--work-dir", tmp.resolve("work").toString());
        Profile profile = new Profile(args);
        args.rejectUnknown();
        ByteArrayOutputStream console = new ByteArrayOutputStream();
        List<RunResult> results =
                new Harness(profile, new PrintStream(console, true, StandardCharsets.UTF_8)).run("bench (smoke test)");
        String printed = console.toString(StandardCharsets.UTF_8);

        // checkpointing off + 2 backends, for each of the 2 jobs
        assertThat(results).hasSize(6);
        for (RunResult r : results) {
            assertThat(r.status).as(r.label() + "\n" + printed).isEqualTo("ok");
            assertThat(r.verified).as(r.label() + ": " + r.verification).isTrue();
            assertThat(r.verification).startsWith("VERIFIED");
            assertThat(r.throughput).as(r.label()).isPositive();
            assertThat(r.recordsProcessed).as(r.label()).isPositive();
            if (r.backend.equals(RunResult.CHECKPOINTING_OFF)) {
                assertThat(r.checkpoints.completed).isZero();
                continue;
            }
            assertThat(r.checkpoints.completed).as(r.label()).isPositive();
            assertThat(r.checkpoints.durationP99Ms).as(r.label()).isGreaterThanOrEqualTo(r.checkpoints.durationP50Ms);
            assertThat(r.checkpoints.fullBytesAvg).as(r.label()).isPositive();
            assertThat(r.storageBytesWritten).as(r.label()).isPositive();
            // the injected failure happened and the job processed records again afterwards
            assertThat(r.recoveryFirstRecordMs).as(r.label()).isPositive();
        }
        assertThat(printed).contains("[6/6]").contains("bandwidth of local");

        List<String> csv = Files.readAllLines(new File(out, "results.csv").toPath());
        assertThat(csv).hasSize(7);
        assertThat(csv.get(0)).startsWith("job,backend,storage,status,verified,");
        assertThat(csv.subList(1, 7)).allSatisfy(line -> assertThat(line).contains(",ok,true,"));
        assertThat(Files.readAllLines(new File(out, "bandwidth.csv").toPath())).hasSize(2);

        String markdown = Files.readString(new File(out, "results.md").toPath());
        assertThat(markdown)
                .contains("| job | backend | storage | verified |")
                .contains("| wordcount | hashmap | local | yes |")
                .contains("| wordcount | appendlog | local | yes |")
                .contains("| topk | hashmap | local | yes |")
                .contains("| topk | appendlog | local | yes |")
                .contains("![throughput.png](throughput.png)");
        for (String chart :
                new String[] {"throughput.png", "checkpoint-duration.png", "checkpoint-bytes.png", "recovery.png"}) {
            BufferedImage image = ImageIO.read(new File(out, chart));
            assertThat(image).as(chart).isNotNull();
            assertThat(image.getWidth()).isGreaterThan(500);
            assertThat(image.getHeight()).isGreaterThan(100);
        }
    }
}
