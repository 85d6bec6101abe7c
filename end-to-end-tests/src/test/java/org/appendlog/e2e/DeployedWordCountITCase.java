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

package org.appendlog.e2e;

import org.appendlog.e2e.job.CheckedWordCount;

import org.apache.flink.configuration.WebOptions;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.IntStream;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The product deployed as a user deploys it: HDFS (NameNode, DataNode), HBase (HMaster with its ZooKeeper)
 * and a Flink session cluster (JobManager, TaskManager) as separate processes started by {@code deploy/},
 * the plugin jars installed from the binary distribution into Flink's lib, {@code flink-conf.yaml} selecting
 * the appendlog state backend (log on {@code hdfs://}) and the HBase checkpoint storage, jobs submitted
 * through Flink's CLI.
 *
 * <p>One word count runs through a TaskManager crash ({@code kill -9}) and a replacement TaskManager, then
 * is cancelled with its checkpoint retained, when its log on HDFS must hold only what that checkpoint refers to;
 * a new job resumes from the checkpoint's {@code hbase://} pointer and finishes. Every word must reach exactly
 * its count, never more.
 *
 * <p>The distribution's bundled job runs on the same cluster as its README says, {@code bin/flink run
 * examples/examples-<version>.jar}, and checks its own counts.
 */
class DeployedWordCountITCase {

    private static final int WORDS = 20;
    private static final int REPETITIONS = 300;
    /** Slow enough that the first job is still reading when it is cancelled (6000 records take 150 s). */
    private static final int SLOW_RATE = 40;
    /** The resumed job reads the rest at this rate (records per second): the rate is not part of the state. */
    private static final int FAST_RATE = 2000;

    private static final String POINTER_PREFIX = "hbase://flink_checkpoints/";

    private static Path work;
    private static DeployedCluster cluster;
    private static Path jobJar;

    @BeforeAll
    static void startCluster() throws Exception {
        Path repo = Paths.get(System.getProperty("e2e.repo.dir")).toRealPath();
        work = Paths.get(System.getProperty("e2e.work.dir")).toAbsolutePath();
        deleteRecursively(work);
        Files.createDirectories(work);
        jobJar =
                JobJar.build(
                        Paths.get(System.getProperty("e2e.job.classes")),
                        work.resolve("checked-word-count.jar"),
                        CheckedWordCount.class.getName());
        cluster = new DeployedCluster(repo, work);
        // As a user installs the plugins: from the binary distribution into Flink's lib/.
        cluster.script("install.sh", System.getProperty("e2e.distribution"));
        cluster.script("cluster.sh", "start");
    }

    @AfterAll
    static void stopCluster() {
        if (cluster != null) {
            cluster.close();
        }
    }

    @Test
    void countsExactlyThroughTaskManagerCrashAndResumeFromRetainedHBaseCheckpoint() throws Exception {
        Path out = work.resolve("report");

        // 1. Submit, let at least one checkpoint complete, then kill -9 the only TaskManager mid-run.
        // Small segments and eager compaction: segments roll and compaction runs appear between checkpoints, so
        // the crash is likely to leave files that no completed checkpoint refers to.
        String first = submit(
                List.of("-Dstate.backend.appendlog.segment-size=1kb",
                        "-Dstate.backend.appendlog.compaction.min-dirty-ratio=0.2"),
                SLOW_RATE, out);
        waitFor("a completed checkpoint of " + first, Duration.ofSeconds(120),
                () -> checkpoints(first).path("counts").path("completed").asInt() >= 1);
        assertThat(finalCounts(out)).as("the job is still reading when the TaskManager dies").hasSizeLessThan(WORDS);
        cluster.script("flink.sh", "kill-taskmanager", "1");
        cluster.script("flink.sh", "start-taskmanager", "2");

        // 2. The job restores from its latest checkpoint on the new TaskManager and checkpoints again.
        waitFor("a restore of " + first + " and a checkpoint after it", Duration.ofSeconds(120), () -> {
            JsonNode latest = checkpoints(first).path("latest");
            JsonNode restored = latest.path("restored");
            return restored.has("id")
                    && latest.path("completed").path("id").asLong() > restored.path("id").asLong();
        });
        assertThat(checkpoints(first).path("latest").path("restored").path("external_path").asText())
                .matches(POINTER_PREFIX + first + "/run-[0-9a-f]{16}/chk-[0-9]+");

        // 3. Cancel; the latest completed checkpoint is retained in HBase, its log segments on HDFS.
        assertThat(finalCounts(out)).as("the job is still reading when it is cancelled").hasSizeLessThan(WORDS);
        cluster.flink("cancel", first);
        waitFor(first + " cancelled", Duration.ofSeconds(60), () -> "CANCELED".equals(jobState(first)));
        String pointer = retainedCheckpoint(first);
        assertThat(pointer).matches(POINTER_PREFIX + first + "/run-[0-9a-f]{16}/chk-[0-9]+");
        assertThat(cluster.listHdfs("/flink/appendlog/" + first))
                .as("the appendlog state backend's log of the job on HDFS")
                .isNotEmpty();
        assertLogHoldsOnlyWhatTheRetainedCheckpointRefersTo(first, pointer);

        // 4. A new job resumes from the hbase:// pointer, reads the rest quickly and finishes.
        String second = submit(List.of("-s", pointer), FAST_RATE, out);
        waitFor(second + " finished", Duration.ofSeconds(150), () -> "FINISHED".equals(jobState(second)));
        assertThat(checkpoints(second).path("latest").path("restored").path("external_path").asText())
                .isEqualTo(pointer);

        List<String> report = reportLines(out);
        assertThat(report).as("counts beyond the input").noneMatch(line -> line.startsWith("OVERCOUNT"));
        Set<String> expected =
                IntStream.range(0, WORDS)
                        .mapToObj(w -> CheckedWordCount.wordAt(w, WORDS) + " " + REPETITIONS)
                        .collect(Collectors.toCollection(TreeSet::new));
        assertThat(new TreeSet<>(report)).as("every word counted exactly %d times", REPETITIONS).isEqualTo(expected);
    }

    @Test
    void runsTheDistributionsBundledJobWithFlinkRun() throws Exception {
        Path jar = bundledJob();
        // Attached, as the README gives it: the CLI waits for the job, which checks every count and exits
        // with status 1 on a difference (the script then fails).
        String output = cluster.flink("run", jar.toString(), "20000");
        assertThat(output)
                .contains("Processed 20000 words", "Every count matches the input: OK")
                .contains("state backend org.appendlog.statebackend.AppendLogStateBackendFactory");
        String job = jobId(output);

        assertThat(jobState(job)).isEqualTo("FINISHED");
        JsonNode checkpoints = checkpoints(job);
        assertThat(checkpoints.path("counts").path("completed").asInt()).as("completed checkpoints").isPositive();
        assertThat(checkpoints.path("latest").path("completed").path("external_path").asText())
                .startsWith(POINTER_PREFIX + job + "/run-");
        assertThat(cluster.listHdfs("/flink/appendlog")).as("the jobs' state logs on HDFS").contains(job);
    }

    /** The job jar of the distribution that deploy/install.sh unpacked. */
    private static Path bundledJob() throws IOException {
        try (Stream<Path> jars = Files.list(work.resolve("dist"))) {
            Path dist = jars.filter(p -> p.getFileName().toString().startsWith("appendlog-")).findFirst().orElseThrow();
            try (Stream<Path> examples = Files.list(dist.resolve("examples"))) {
                return examples.filter(p -> p.getFileName().toString().endsWith(".jar")).findFirst().orElseThrow();
            }
        }
    }

    /**
     * After the crash, the restore and the cancel, the job's log on HDFS holds the files the retained checkpoint
     * refers to (as the log tool reads them from its {@code _metadata}) and nothing that the killed TaskManager
     * left. The one exception is Flink's: a checkpoint in flight at the cancel whose acknowledgement the
     * JobManager drops without discarding it keeps the files it was given, whose names carry a floor above the
     * retained checkpoint's id.
     */
    private static void assertLogHoldsOnlyWhatTheRetainedCheckpointRefersTo(String job, String pointer)
            throws Exception {
        long retained = Long.parseLong(pointer.substring(pointer.lastIndexOf("/chk-") + 5));
        Set<String> referenced = new TreeSet<>();
        for (String line : cluster.script("appendlog-log.sh", "inspect", pointer + "/_metadata").split("\n")) {
            if (line.startsWith("  refers to ")) {
                referenced.add(line.substring(line.lastIndexOf('/') + 1).trim());
            }
        }
        Set<String> inLog = new TreeSet<>(cluster.listHdfsFiles("/flink/appendlog/" + job));
        Set<String> unreferenced = new TreeSet<>(inLog);
        unreferenced.removeAll(referenced);
        System.out.printf(
                "The log of %s holds %d file(s); retained checkpoint %d refers to %d; unreferenced: %s; the"
                        + " restored TaskManager's sweep deleted %d file(s)%n",
                job, inLog.size(), retained, referenced.size(), unreferenced, sweptFiles());
        assertThat(referenced).as("files the retained checkpoint refers to").isNotEmpty();
        assertThat(inLog).as("the job's log holds every file the retained checkpoint refers to").containsAll(referenced);
        Pattern floor = Pattern.compile("-c(\\d+)-(?:run-)?\\d+\\.seg$");
        assertThat(unreferenced)
                .as("files of the log that retained checkpoint %d does not refer to", retained)
                .allSatisfy(name -> {
                    Matcher m = floor.matcher(name);
                    assertThat(m.find() && Long.parseLong(m.group(1)) > retained)
                            .as("%s was written for a checkpoint after %d", name, retained)
                            .isTrue();
                });
    }

    /** The files that the sweeps after restores deleted, by the TaskManagers' logs. */
    private static long sweptFiles() throws IOException {
        long swept = 0;
        try (Stream<Path> logs = Files.list(work.resolve("logs"))) {
            for (Path log : (Iterable<Path>) logs::iterator) {
                if (log.getFileName().toString().contains("taskmanager")) {
                    swept += Files.readAllLines(log, StandardCharsets.ISO_8859_1).stream()
                            .filter(line -> line.contains("Deleted orphaned state log file"))
                            .count();
                }
            }
        }
        return swept;
    }

    /**
     * {@code flink run -d <cliOptions> -c <class> <jar> <job arguments>}: submits the job detached, reading at
     * the given rate and reporting into {@code out}; returns its job id.
     */
    private static String submit(List<String> cliOptions, int rate, Path out) throws Exception {
        List<String> command = new ArrayList<>(List.of("run", "-d"));
        command.addAll(cliOptions);
        command.addAll(List.of("-c", CheckedWordCount.class.getName(), jobJar.toString()));
        command.addAll(List.of(
                "--words", Integer.toString(WORDS),
                "--repetitions", Integer.toString(REPETITIONS),
                "--rate", Integer.toString(rate),
                "--out", out.toString()));
        return jobId(cluster.flink(command.toArray(new String[0])));
    }

    /** The id of the job that Flink's CLI reports it submitted. */
    private static String jobId(String cliOutput) {
        Matcher id = Pattern.compile("Job has been submitted with JobID ([0-9a-f]{32})").matcher(cliOutput);
        assertThat(id.find()).as("job id in the CLI output:\n%s", cliOutput).isTrue();
        return id.group(1);
    }

    private static JsonNode checkpoints(String job) throws Exception {
        return cluster.rest("/jobs/" + job + "/checkpoints");
    }

    /**
     * The pointer of the checkpoint that a cancelled job retained. The REST API serves checkpoint statistics
     * from a cache kept for {@code web.refresh-interval} (the fallback of
     * {@code rest.cache.checkpoint-statistics.timeout}), so a read right after the job turned CANCELED can
     * still name a checkpoint that a later one subsumed and discarded; a read after the cache expired is final.
     */
    private static String retainedCheckpoint(String job) throws Exception {
        Thread.sleep(WebOptions.REFRESH_INTERVAL.defaultValue().plusMillis(500).toMillis());
        return checkpoints(job).path("latest").path("completed").path("external_path").asText();
    }

    private static String jobState(String job) throws Exception {
        return cluster.rest("/jobs/" + job).path("state").asText();
    }

    /** The words whose final count was reported so far. */
    private static Set<String> finalCounts(Path out) throws IOException {
        return reportLines(out).stream()
                .filter(line -> !line.startsWith("OVERCOUNT"))
                .collect(Collectors.toSet());
    }

    private static List<String> reportLines(Path out) throws IOException {
        if (!Files.isDirectory(out)) {
            return List.of();
        }
        List<String> lines = new ArrayList<>();
        try (Stream<Path> files = Files.list(out)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                lines.addAll(Files.readAllLines(file, StandardCharsets.UTF_8));
            }
        }
        return lines;
    }

    private interface Condition {
        boolean holds() throws Exception;
    }

    private static void waitFor(String what, Duration timeout, Condition condition) throws Exception {
        long deadline = System.nanoTime() + timeout.toNanos();
        while (!condition.holds()) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(what + " not reached within " + timeout + cluster.logTails());
            }
            Thread.sleep(500);
        }
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (!Files.exists(dir)) {
            return;
        }
        try (Stream<Path> walk = Files.walk(dir)) {
            for (Path path : (Iterable<Path>) walk.sorted((a, b) -> b.compareTo(a))::iterator) {
                Files.delete(path);
            }
        }
    }
}
