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

package org.appendlog.logtool;

import org.appendlog.testing.S3Server;

import org.apache.flink.core.fs.Path;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.jar.JarFile;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The packaged tool jar: what it holds, and {@code bin/appendlog-log.sh} running it as a binary
 * distribution lays it out ({@code bin/} the script, {@code lib/} the tool jar) on a Flink
 * installation whose {@code lib/} holds Flink and the backend jar but no picocli, on local files
 * and on {@code s3://} through Flink's S3 plugin.
 */
class ToolJarIT {

    @TempDir static java.nio.file.Path dir;
    private static java.nio.file.Path toolJar;
    private static java.nio.file.Path flinkHome;
    private static java.nio.file.Path script;

    @BeforeAll
    static void layOutDistribution() throws IOException {
        try (Stream<java.nio.file.Path> files = Files.list(Paths.get("target"))) {
            List<java.nio.file.Path> jars =
                    files.filter(f -> f.getFileName().toString().matches("appendlog-log-tool-[0-9.]+-[0-9.]+(-SNAPSHOT)?\\.jar"))
                            .collect(Collectors.toList());
            assertThat(jars).as("the packaged tool jar in target/").hasSize(1);
            toolJar = jars.get(0);
        }
        flinkHome = flinkHomeFromTestClasspath();
        java.nio.file.Path distribution = dir.resolve("appendlog");
        Files.createDirectories(distribution.resolve("bin"));
        Files.createDirectories(distribution.resolve("lib"));
        script = distribution.resolve("bin").resolve("appendlog-log.sh");
        Files.copy(Paths.get("..", "flink-statebackend-appendlog", "bin", "appendlog-log.sh"), script);
        Files.copy(toolJar, distribution.resolve("lib").resolve(toolJar.getFileName()));
    }

    @Test
    void holdsOnlyTheToolAndRelocatedPicocli() throws IOException {
        List<String> entries;
        String mainClass;
        try (JarFile jar = new JarFile(toolJar.toFile())) {
            entries = jar.stream().map(e -> e.getName()).filter(n -> !n.endsWith("/")).collect(Collectors.toList());
            mainClass = jar.getManifest().getMainAttributes().getValue("Main-Class");
        }
        assertThat(mainClass).isEqualTo(LogToolCommand.class.getName());
        assertThat(entries)
                .contains(
                        "org/appendlog/logtool/LogToolCommand.class",
                        "org/appendlog/logtool/version.properties",
                        "org/appendlog/logtool/shaded/picocli/CommandLine.class")
                .allSatisfy(
                        name ->
                                assertThat(
                                                name.startsWith("org/appendlog/logtool/")
                                                        || name.equals("META-INF/MANIFEST.MF")
                                                        || name.startsWith("META-INF/maven/org.appendlog/appendlog-log-tool/"))
                                        .as(name)
                                        .isTrue());
        System.out.printf("%s: %d entries%n", toolJar.getFileName(), entries.size());
    }

    @Test
    void theScriptRunsTheJarOnAFlinkInstallation() throws Exception {
        TwoCheckpointSegment segment = new TwoCheckpointSegment(new Path(dir.resolve("log").toUri()));

        ToolRun good = run(Map.of(), "verify", segment.file.toString());
        assertThat(good.exit).as(good.toString()).isEqualTo(0);
        assertThat(good.out).contains("2 batch(es)", "0 problem(s)");

        ToolRun json = run(Map.of(), "inspect", "--json", dir.resolve("log").toString());
        assertThat(json.exit).as(json.toString()).isEqualTo(0);
        JsonNode root = json.json();
        assertThat(root.at("/totals/batches").asInt()).isEqualTo(2);
        assertThat(root.at("/totals/liveEntries").asLong()).isEqualTo(TwoCheckpointSegment.KEYS);

        ToolRun usage = run(Map.of(), "verify", "--bogus", segment.file.toString());
        assertThat(usage.exit).as(usage.toString()).isEqualTo(2);
        assertThat(usage.err).contains("Unknown option: '--bogus'");

        ToolRun missing = run(Map.of(), "verify", dir.resolve("no-such-log").toString());
        assertThat(missing.exit).as(missing.toString()).isEqualTo(3);
        assertThat(missing.err).contains("cannot read", "no-such-log");

        assertThat(Files.readString(flinkHome.resolve("log").resolve("appendlog-log.log")))
                .as("Flink's client logging configuration applies")
                .isNotEmpty();
    }

    /**
     * A {@code FLINK_HOME} whose {@code lib/} links the jars of this test's classpath (Flink, the
     * backend, Hadoop for {@code hdfs://}) except picocli and the tool itself, with a {@code
     * conf/} holding a configuration and Flink's client logging configuration.
     */
    private static java.nio.file.Path flinkHomeFromTestClasspath() throws IOException {
        java.nio.file.Path home = dir.resolve("flink");
        java.nio.file.Path lib = Files.createDirectories(home.resolve("lib"));
        java.nio.file.Path conf = Files.createDirectories(home.resolve("conf"));
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            java.nio.file.Path path = Paths.get(entry);
            String name = path.getFileName().toString();
            if (name.endsWith(".jar") && !name.startsWith("picocli-") && !name.startsWith("appendlog-log-tool")
                    && !Files.exists(lib.resolve(name))) {
                Files.createSymbolicLink(lib.resolve(name), path.toAbsolutePath());
            }
        }
        Files.writeString(conf.resolve("config.yaml"), "fs.default-scheme: file:///\n");
        Files.writeString(
                conf.resolve("log4j-cli.properties"),
                String.join(
                        "\n",
                        "rootLogger.level = INFO",
                        "rootLogger.appenderRef.file.ref = FileAppender",
                        "appender.file.name = FileAppender",
                        "appender.file.type = FILE",
                        "appender.file.fileName = ${sys:log.file}",
                        "appender.file.layout.type = PatternLayout",
                        "appender.file.layout.pattern = %d %-5p %c - %m%n",
                        ""));
        return home;
    }

    /**
     * {@code s3://} through the S3 plugin of {@code FLINK_PLUGINS_DIR}, configured from {@code
     * --conf-dir}; without the plugin, the scheme is not supported: a tool failure.
     */
    @Test
    void theScriptReadsS3WithThePluginsDirAndConfDir() throws Exception {
        try (S3Server s3 = S3Server.start(S3Server.s3proxyJar(), dir.resolve("s3"))) {
            String log = S3Server.uri("flink/appendlog/job");
            s3.loadS3Plugin();
            try {
                new TwoCheckpointSegment(new Path(log));
            } finally {
                S3Server.unloadS3Plugin();
            }
            java.nio.file.Path conf = Files.createDirectories(dir.resolve("s3-conf"));
            Files.write(
                    conf.resolve("config.yaml"),
                    s3.flinkConfig().toMap().entrySet().stream()
                            .map(e -> e.getKey() + ": " + e.getValue())
                            .collect(Collectors.toList()));
            String plugins = S3Server.pluginsDir().toString();

            ToolRun json = run(Map.of("FLINK_PLUGINS_DIR", plugins), "verify", "--json", "--conf-dir", conf.toString(), log);
            assertThat(json.exit).as(json.toString()).isEqualTo(0);
            assertThat(json.json().at("/segments/0/file").asText())
                    .isEqualTo(log + "/" + TwoCheckpointSegment.NAME);
            assertThat(json.json().at("/totals/batches").asInt()).isEqualTo(2);
            assertThat(json.json().at("/totals/liveEntries").asLong()).isEqualTo(TwoCheckpointSegment.KEYS);

            java.nio.file.Path noPlugins = Files.createDirectories(dir.resolve("no-plugins"));
            ToolRun unsupported =
                    run(Map.of("FLINK_PLUGINS_DIR", noPlugins.toString()), "verify", "--conf-dir", conf.toString(), log);
            assertThat(unsupported.exit).as(unsupported.toString()).isEqualTo(3);
            assertThat(unsupported.err).contains("cannot read " + log, "'s3'");
        }
    }

    private static ToolRun run(Map<String, String> env, String... args)
            throws IOException, InterruptedException {
        List<String> command = new ArrayList<>(List.of("bash", script.toString()));
        Collections.addAll(command, args);
        ProcessBuilder builder = new ProcessBuilder(command);
        builder.environment().put("FLINK_HOME", flinkHome.toString());
        builder.environment().remove("FLINK_CONF_DIR");
        builder.environment().remove("HADOOP_CLASSPATH");
        builder.environment().remove("FLINK_PLUGINS_DIR");
        builder.environment().putAll(env);
        java.nio.file.Path out = Files.createTempFile(dir, "out", ".txt");
        java.nio.file.Path err = Files.createTempFile(dir, "err", ".txt");
        Process process = builder.redirectOutput(out.toFile()).redirectError(err.toFile()).start();
        assertThat(process.waitFor(120, TimeUnit.SECONDS)).as("the tool finishes").isTrue();
        return new ToolRun(
                process.exitValue(),
                Files.readString(out, StandardCharsets.UTF_8),
                Files.readString(err, StandardCharsets.UTF_8));
    }
}
