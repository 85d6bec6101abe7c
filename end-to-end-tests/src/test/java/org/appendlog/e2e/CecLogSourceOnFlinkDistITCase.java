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

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A job that writes a CEC stream and reads it back with {@code CecLogSource} ({@value #JOB}), run in a
 * JVM whose classpath is what a user's job has on a Flink cluster: Flink's distribution (the classpath that
 * {@code deploy/} starts Flink with), the CEC jar and the job's own classes (the CEC module's test classes,
 * where the job shares the word count's aggregate), nothing else.
 */
class CecLogSourceOnFlinkDistITCase {

    private static final String JOB = "org.appendlog.cec.source.CecLogHistory";
    private static final int WORDS = 10;
    private static final long EVENTS = 6000;

    private static Path work;
    private static String flinkDist;

    @BeforeAll
    static void resolveFlinkDistribution() throws Exception {
        work = Paths.get(System.getProperty("e2e.work.dir")).toAbsolutePath().resolve("cec-on-flink-dist");
        Files.createDirectories(work);
        flinkDist = DeployClasspath.of("flink", work);
        assertThat(flinkDist).contains("flink-runtime-", "flink-streaming-java-").doesNotContain("flink-connector-base");
    }

    @Test
    void theFlinkLibJarReadsThePersistedStreamBack() throws Exception {
        Path log = work.resolve("lib-jar-log");
        Path out = work.resolve("lib-jar-history.txt");
        Run run = run(PluginJars.flinkLib("flink-cec-operators"), log, out);
        assertThat(run.exitCode).as("exit code of the job's JVM, output:\n%s", run.output).isZero();

        List<String> expected = new ArrayList<>();
        for (int w = 0; w < WORDS; w++) {
            expected.add("w" + w + " " + EVENTS / WORDS);
        }
        // One RESULT per word and one-second window.
        expected.add("results " + WORDS * (EVENTS / 1000));
        expected.sort(null);
        List<String> lines = new ArrayList<>(Files.readAllLines(out));
        lines.sort(null);
        assertThat(lines).isEqualTo(expected);
    }

    /** What the plain jar did on the same classpath: the source's reader is not found. */
    @Test
    void thePlainJarLacksTheSourceReaderBase() throws Exception {
        Run run = run(PluginJars.plain("flink-cec-operators"), work.resolve("plain-jar-log"), work.resolve("plain-jar-history.txt"));
        assertThat(run.exitCode).isNotZero();
        assertThat(run.output).contains("NoClassDefFoundError", "SingleThreadMultiplexSourceReaderBase");
    }

    private static Run run(Path cecJar, Path log, Path out) throws Exception {
        deleteRecursively(log);
        Files.deleteIfExists(out);
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx1g");
        command.addAll(Arrays.asList(System.getProperty("e2e.java.opens").trim().split("\\s+")));
        command.add("-cp");
        Path jobClasses = PluginJars.repo().resolve("flink-cec-operators").resolve("target").resolve("test-classes");
        command.add(flinkDist + File.pathSeparator + cecJar + File.pathSeparator + jobClasses);
        command.add(JOB);
        command.addAll(List.of("--log", log.toString(), "--out", out.toString(),
                "--words", Integer.toString(WORDS), "--events", Long.toString(EVENTS)));
        Path output = work.resolve(log.getFileName() + ".out");
        Process process = new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
        try {
            assertThat(process.waitFor(3, TimeUnit.MINUTES)).as("the job's JVM finished, output in %s", output).isTrue();
        } finally {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
        }
        return new Run(process.exitValue(), Files.readString(output, StandardCharsets.UTF_8));
    }

    private static void deleteRecursively(Path dir) throws IOException {
        if (Files.exists(dir)) {
            try (var paths = Files.walk(dir)) {
                paths.sorted((a, b) -> b.compareTo(a)).forEach(p -> p.toFile().delete());
            }
        }
    }

    private static final class Run {
        final int exitCode;
        final String output;

        Run(int exitCode, String output) {
            this.exitCode = exitCode;
            this.output = output;
        }
    }
}
