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

import org.appendlog.testing.ListeningPorts;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.stream.Stream;

/**
 * The HDFS, HBase and Flink processes that the {@code deploy/} scripts start, on free loopback ports, with
 * their state under one work directory. {@link #close()} stops them through the scripts and then kills,
 * with their process trees, whatever is still alive of every process they ever recorded; a JVM shutdown
 * hook does the same if the test JVM exits without closing.
 */
final class DeployedCluster implements AutoCloseable {

    private static final Duration SCRIPT_TIMEOUT = Duration.ofMinutes(4);

    private final Path repo;
    private final Path work;
    private final Map<String, String> env = new HashMap<>();
    private final List<Long> startedPids = new ArrayList<>();
    private final HttpClient http = HttpClient.newHttpClient();
    private final ObjectMapper json = new ObjectMapper();
    private final Thread shutdownHook = new Thread(this::killRecorded, "deployed-cluster-cleanup");
    private final int restPort;
    private final int namenodeHttpPort;

    DeployedCluster(Path repo, Path work) throws IOException {
        this.repo = repo;
        this.work = work;
        env.put("APPENDLOG_DEPLOY_DIR", work.toString());
        ListeningPorts ports = new ListeningPorts();
        for (String port :
                List.of(
                        "REST_PORT",
                        "NAMENODE_HTTP_PORT",
                        "NAMENODE_PORT",
                        "DATANODE_PORT",
                        "DATANODE_HTTP_PORT",
                        "DATANODE_IPC_PORT",
                        "ZOOKEEPER_PORT",
                        "HBASE_MASTER_PORT",
                        "HBASE_REGIONSERVER_PORT",
                        "JOBMANAGER_RPC_PORT")) {
            env.put(port, Integer.toString(ports.next()));
        }
        this.restPort = Integer.parseInt(env.get("REST_PORT"));
        this.namenodeHttpPort = Integer.parseInt(env.get("NAMENODE_HTTP_PORT"));
        Runtime.getRuntime().addShutdownHook(shutdownHook);
    }

    /** Runs {@code deploy/<script> <args>} to completion and returns its output; fails if it fails. */
    String script(String script, String... args) throws IOException, InterruptedException {
        List<String> command = new ArrayList<>();
        command.add(repo.resolve("deploy").resolve(script).toString());
        command.addAll(Arrays.asList(args));
        Path output = Files.createTempFile(work, script, ".out");
        ProcessBuilder builder =
                new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile());
        builder.environment().putAll(env);
        Process process = builder.start();
        boolean done = process.waitFor(SCRIPT_TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        recordPids();
        String text = Files.readString(output);
        if (!done) {
            killTree(process.toHandle());
            throw new IllegalStateException(
                    "deploy/" + script + " " + String.join(" ", args) + " timed out; output:\n" + text);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException(
                    "deploy/" + script + " " + String.join(" ", args) + " exited with "
                            + process.exitValue() + "; output:\n" + text + logTails());
        }
        return text;
    }

    /** Runs {@code deploy/flink-run.sh}: Flink's command line client against this cluster. */
    String flink(String... args) throws IOException, InterruptedException {
        return script("flink-run.sh", args);
    }

    /** GET on the Flink REST API. */
    JsonNode rest(String path) throws IOException, InterruptedException {
        return getJson("http://127.0.0.1:" + restPort + path);
    }

    /** The names in an HDFS directory, through WebHDFS on the NameNode; empty if it does not exist. */
    List<String> listHdfs(String dir) throws IOException, InterruptedException {
        JsonNode status =
                getJson("http://127.0.0.1:" + namenodeHttpPort + "/webhdfs/v1" + dir + "?op=LISTSTATUS");
        List<String> names = new ArrayList<>();
        status.path("FileStatuses").path("FileStatus").forEach(f -> names.add(f.get("pathSuffix").asText()));
        return names;
    }

    /** The names of the files in an HDFS directory and all directories below it. */
    List<String> listHdfsFiles(String dir) throws IOException, InterruptedException {
        JsonNode status =
                getJson("http://127.0.0.1:" + namenodeHttpPort + "/webhdfs/v1" + dir + "?op=LISTSTATUS");
        List<String> names = new ArrayList<>();
        for (JsonNode f : status.path("FileStatuses").path("FileStatus")) {
            String name = f.get("pathSuffix").asText();
            if ("DIRECTORY".equals(f.path("type").asText())) {
                names.addAll(listHdfsFiles(dir + "/" + name));
            } else {
                names.add(name);
            }
        }
        return names;
    }

    private JsonNode getJson(String url) throws IOException, InterruptedException {
        HttpResponse<String> response =
                http.send(
                        HttpRequest.newBuilder(URI.create(url)).timeout(Duration.ofSeconds(30)).build(),
                        HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        return json.readTree(response.body());
    }

    /** The last lines of every process log, for failure messages. */
    String logTails() {
        StringBuilder tails = new StringBuilder();
        try (Stream<Path> logs = Files.list(work.resolve("logs"))) {
            for (Path log : (Iterable<Path>) logs.sorted()::iterator) {
                List<String> lines = Files.readAllLines(log, StandardCharsets.ISO_8859_1);
                tails.append("\n==== ").append(log).append(" (last 15 lines)\n");
                lines.subList(Math.max(0, lines.size() - 15), lines.size())
                        .forEach(l -> tails.append(l).append('\n'));
            }
        } catch (IOException e) {
            tails.append("\n(could not read the logs: ").append(e).append(')');
        }
        return tails.toString();
    }

    @Override
    public void close() {
        try {
            script("cluster.sh", "stop");
        } catch (Exception e) {
            System.err.println("deploy/cluster.sh stop failed, killing the processes: " + e);
        } finally {
            killRecorded();
            Runtime.getRuntime().removeShutdownHook(shutdownHook);
        }
    }

    /** Remembers the pid of every process the scripts have started so far, even after its pid file is gone. */
    private synchronized void recordPids() throws IOException {
        Path pids = work.resolve("pids");
        if (!Files.isDirectory(pids)) {
            return;
        }
        try (Stream<Path> files = Files.list(pids)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                long pid = Long.parseLong(Files.readString(file).trim());
                if (!startedPids.contains(pid)) {
                    startedPids.add(pid);
                }
            }
        }
    }

    private synchronized void killRecorded() {
        try {
            recordPids();
        } catch (IOException | UncheckedIOException | NumberFormatException e) {
            System.err.println("could not read the pid files: " + e);
        }
        // Only processes that are still ours: every command line of them names the work directory.
        String mark = work.toString();
        for (long pid : startedPids) {
            ProcessHandle.of(pid)
                    .filter(p -> p.info().commandLine().map(c -> c.contains(mark)).orElse(false))
                    .ifPresent(DeployedCluster::killTree);
        }
    }

    private static void killTree(ProcessHandle process) {
        process.descendants().forEach(ProcessHandle::destroyForcibly);
        process.destroyForcibly();
    }
}
