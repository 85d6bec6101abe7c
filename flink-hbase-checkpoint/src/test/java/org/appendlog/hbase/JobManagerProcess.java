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

package org.appendlog.hbase;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.runtime.entrypoint.StandaloneSessionClusterEntrypoint;

import java.io.IOException;
import java.lang.management.ManagementFactory;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * A real Flink job manager (standalone session entrypoint) in its own JVM, started from the test
 * classpath as {@code flink/lib} would provide it. Its own process matters: whatever this test
 * JVM's jobs registered in static state is not there, as after a job manager restart.
 */
final class JobManagerProcess implements AutoCloseable {

    private final Process process;
    private final Path log;

    private JobManagerProcess(Process process, Path log) {
        this.process = process;
        this.log = log;
    }

    /** Writes {@code config} as the process's {@code config.yaml} under {@code workDir} and starts it. */
    static JobManagerProcess start(Configuration config, Path workDir) throws IOException {
        Path configDir = Files.createDirectories(workDir.resolve("conf"));
        List<String> yaml = new ArrayList<>();
        for (Map.Entry<String, String> entry : config.toMap().entrySet()) {
            yaml.add(entry.getKey() + ": '" + entry.getValue().replace("'", "''") + "'");
        }
        Files.write(configDir.resolve("config.yaml"), yaml, StandardCharsets.UTF_8);

        List<String> command = new ArrayList<>();
        command.add(Path.of(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx512m");
        // The same module opens as this JVM (surefire's argLine): Flink needs them on Java 17.
        for (String argument : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (argument.startsWith("--add-opens") || argument.startsWith("--add-exports")) {
                command.add(argument);
            }
        }
        command.add("-cp");
        command.add(System.getProperty("java.class.path"));
        command.add(StandaloneSessionClusterEntrypoint.class.getName());
        command.add("--configDir");
        command.add(configDir.toString());

        Path log = workDir.resolve("jobmanager.log");
        Process process =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        return new JobManagerProcess(process, log);
    }

    boolean isAlive() {
        return process.isAlive();
    }

    /** The end of the process's output, for failure messages. */
    String logTail() throws IOException {
        List<String> lines = Files.readAllLines(log, StandardCharsets.ISO_8859_1);
        return String.join("\n", lines.subList(Math.max(0, lines.size() - 40), lines.size()));
    }

    /**
     * Stops it as {@code stop-cluster.sh} does (SIGTERM): Flink's shutdown hook closes the cluster,
     * which lets the io executor finish the deletes already handed to it.
     */
    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }
}
