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

import org.appendlog.hbase.HBaseCheckpointStorageOptions;
import org.appendlog.statebackend.AppendLogOptions;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;

import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.attribute.PosixFilePermission;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.concurrent.TimeUnit;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The binary distribution as a user unpacks it: the layout its README names, a checksum that matches,
 * {@code conf/} snippets whose every option exists in the code, with a commented value that is the option's
 * default (a required option's example value must at least parse), and an example job that runs.
 */
class BinaryDistributionTest {

    /** {@code key: value}, optionally commented out with {@code # }. */
    private static final Pattern OPTION_LINE = Pattern.compile("^(# )?([a-z][a-z0-9.-]+): ?(.*)$");

    @TempDir static Path dir;
    private static Path archive;
    private static Path home;

    @BeforeAll
    static void unpack() throws Exception {
        archive = Paths.get(System.getProperty("e2e.distribution")).toRealPath();
        Process tar = new ProcessBuilder("tar", "-xzf", archive.toString(), "-C", dir.toString()).inheritIO().start();
        assertThat(tar.waitFor(60, TimeUnit.SECONDS)).isTrue();
        assertThat(tar.exitValue()).as("tar -xzf %s", archive).isZero();
        try (Stream<Path> top = Files.list(dir)) {
            home = top.collect(Collectors.toList()).get(0);
        }
    }

    @Test
    void holdsThePluginJarsTheLogToolTheSnippetsAndTheExample() throws IOException {
        String version = home.getFileName().toString().substring("appendlog-".length());
        assertThat(archive.getFileName().toString()).isEqualTo("appendlog-" + version + "-bin.tgz");
        assertThat(names(home.resolve("lib")))
                .containsExactlyInAnyOrder(
                        "flink-statebackend-appendlog-" + version + ".jar",
                        "flink-hbase-checkpoint-" + version + "-flink-lib.jar",
                        "flink-cec-operators-" + version + "-flink-lib.jar",
                        "appendlog-log-tool-" + version + ".jar");
        assertThat(names(home.resolve("conf")))
                .containsExactly("appendlog-backend.yaml", "cec.md", "hbase-checkpoint-storage.yaml");
        assertThat(names(home.resolve("examples"))).containsExactly("examples-" + version + ".jar");
        assertThat(Files.getPosixFilePermissions(home.resolve("bin/appendlog-log.sh")))
                .contains(PosixFilePermission.OWNER_EXECUTE, PosixFilePermission.OTHERS_EXECUTE);
        assertThat(home.resolve("README.md")).isRegularFile();
        assertThat(home.resolve("LICENSE")).isRegularFile();
        assertThat(home.resolve("NOTICE")).isRegularFile();
    }

    /**
     * The bundled word count, run as the distribution's README says: its jar and the distribution's lib/ on
     * the classpath with Flink's jars (this JVM's classpath without the project's own modules).
     */
    @Test
    void exampleJobRunsOnTheDistributionsJars() throws Exception {
        String repo = Paths.get(System.getProperty("e2e.repo.dir")).toRealPath().toString();
        List<String> classpath = new ArrayList<>(List.of(home + "/examples/*", home + "/lib/*"));
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            if (!Paths.get(entry).toAbsolutePath().normalize().startsWith(repo)) {
                classpath.add(entry);
            }
        }
        Path output = dir.resolve("wordcount.out");
        Process java =
                new ProcessBuilder(
                                Paths.get(System.getProperty("java.home"), "bin", "java").toString(),
                                "--add-opens=java.base/java.lang=ALL-UNNAMED",
                                "--add-opens=java.base/java.util=ALL-UNNAMED",
                                "-cp",
                                String.join(File.pathSeparator, classpath),
                                "org.appendlog.examples.WordCount",
                                "20000",
                                dir.resolve("wordcount").toString())
                        .redirectErrorStream(true)
                        .redirectOutput(output.toFile())
                        .start();
        if (!java.waitFor(3, TimeUnit.MINUTES)) {
            java.destroyForcibly();
        }
        String text = Files.readString(output);
        assertThat(java.exitValue()).as("the example's exit code; its output:%n%s", text).isZero();
        assertThat(text)
                .contains("Processed 20000 words")
                .contains("1000 distinct words")
                .contains("Every count matches the input: OK");
    }

    @Test
    void checksumFileHoldsTheArchivesSha512() throws Exception {
        String line = Files.readString(Paths.get(archive + ".sha512"), StandardCharsets.US_ASCII).trim();
        assertThat(line).isEqualTo(sha512(archive) + " *" + archive.getFileName());
    }

    @Test
    void backendSnippetNamesEveryOptionWithItsDefault() throws Exception {
        checkSnippet("appendlog-backend.yaml", AppendLogOptions.class, "state.backend.appendlog.");
    }

    @Test
    void hbaseSnippetNamesEveryOptionWithItsDefault() throws Exception {
        checkSnippet(
                "hbase-checkpoint-storage.yaml",
                HBaseCheckpointStorageOptions.class,
                "execution.checkpointing.hbase.");
    }

    /**
     * Every option of {@code options} appears in the snippet; every line under {@code prefix} names one of
     * them; a commented line shows its default, an active line a value that parses.
     */
    private static void checkSnippet(String file, Class<?> options, String prefix) throws Exception {
        Map<String, ConfigOption<?>> defined = optionsOf(options);
        Map<String, String> commented = new LinkedHashMap<>();
        Map<String, String> active = new LinkedHashMap<>();
        for (String line : Files.readAllLines(home.resolve("conf").resolve(file))) {
            Matcher m = OPTION_LINE.matcher(line);
            if (m.matches() && m.group(2).startsWith(prefix)) {
                (m.group(1) == null ? active : commented).put(m.group(2), m.group(3).trim());
            }
        }
        List<String> listed = new ArrayList<>(commented.keySet());
        listed.addAll(active.keySet());
        assertThat(new TreeSet<>(listed)).as("options in conf/%s", file).isEqualTo(defined.keySet());
        for (Map.Entry<String, String> entry : commented.entrySet()) {
            ConfigOption<?> option = defined.get(entry.getKey());
            if (option.hasDefaultValue()) {
                assertThat((Object) parse(option, entry.getValue()))
                        .as("conf/%s: %s", file, entry.getKey())
                        .isEqualTo(option.defaultValue());
            } else {
                assertThat(entry.getValue()).as("conf/%s: %s has no default", file, entry.getKey()).isEmpty();
            }
        }
        for (Map.Entry<String, String> entry : active.entrySet()) {
            assertThat((Object) parse(defined.get(entry.getKey()), entry.getValue()))
                    .as("conf/%s: %s", file, entry.getKey())
                    .isNotNull();
        }
    }

    private static Object parse(ConfigOption<?> option, String value) {
        Configuration conf = new Configuration();
        conf.setString(option.key(), value);
        return conf.get(option);
    }

    private static Map<String, ConfigOption<?>> optionsOf(Class<?> holder) throws IllegalAccessException {
        Map<String, ConfigOption<?>> options = new TreeMap<>();
        for (Field field : holder.getDeclaredFields()) {
            if (Modifier.isStatic(field.getModifiers()) && ConfigOption.class.isAssignableFrom(field.getType())) {
                ConfigOption<?> option = (ConfigOption<?>) field.get(null);
                options.put(option.key(), option);
            }
        }
        return options;
    }

    private static List<String> names(Path dir) throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.map(p -> p.getFileName().toString()).sorted().collect(Collectors.toList());
        }
    }

    private static String sha512(Path file) throws IOException, NoSuchAlgorithmException {
        MessageDigest digest = MessageDigest.getInstance("SHA-512");
        try (InputStream in = Files.newInputStream(file)) {
            byte[] buffer = new byte[1 << 16];
            for (int n; (n = in.read(buffer)) > 0; ) {
                digest.update(buffer, 0, n);
            }
        }
        StringBuilder hex = new StringBuilder();
        for (byte b : digest.digest()) {
            hex.append(String.format("%02x", b));
        }
        return hex.toString();
    }
}
