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
import java.util.ArrayList;
import java.util.List;

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
        Run run = run("--jobs", "wordcount", "--backends", "hashmap,appendlog", "--out", out.getPath());

        // checkpointing off, hashmap, appendlog
        assertThat(run.results).hasSize(3);
        assertMeasuredAndVerified(run);
        assertThat(run.printed).contains("[3/3]").contains("bandwidth of local");

        List<String> csv = Files.readAllLines(new File(out, "results.csv").toPath());
        assertThat(csv).hasSize(4);
        assertThat(csv.get(0)).startsWith("job,backend,storage,status,verified,");
        assertThat(csv.subList(1, 4)).allSatisfy(line -> assertThat(line).contains(",ok,true,"));
        assertThat(Files.readAllLines(new File(out, "bandwidth.csv").toPath())).hasSize(2);

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
        Run run =
                run("--jobs", "topk", "--backends", "hashmap,appendlog", "--limits", "false", "--out", out.getPath());

        assertThat(run.results).hasSize(2);
        assertMeasuredAndVerified(run);
        assertThat(run.results.get(0).verification).contains("top-K of every window");
        assertThat(Files.readString(new File(out, "results.md").toPath()))
                .contains("| topk | hashmap | local | yes |")
                .contains("| topk | appendlog | local | yes |");
    }

    private Run run(String... options) throws Exception {
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
        return new Run(results, console.toString(StandardCharsets.UTF_8));
    }

    private static void assertMeasuredAndVerified(Run run) {
        for (RunResult r : run.results) {
            assertThat(r.status).as(r.label() + "\n" + run.printed).isEqualTo("ok");
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
            // the injected failure happened and the restarted job processed records again
            assertThat(r.recoveryFirstRecordMs).as(r.label()).isPositive();
        }
    }

    private static final class Run {
        final List<RunResult> results;
        final String printed;

        Run(List<RunResult> results, String printed) {
            this.results = results;
            this.printed = printed;
        }
    }
}
