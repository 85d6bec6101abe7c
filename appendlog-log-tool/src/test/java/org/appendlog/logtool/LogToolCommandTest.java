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

import org.appendlog.statebackend.faults.ReliabilityLog;

import org.apache.flink.core.fs.Path;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code appendlog-log} on local files: exit codes, text, JSON, configuration. */
class LogToolCommandTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("log-tool-input");

    @TempDir java.nio.file.Path dir;
    private TwoCheckpointSegment segment;
    private String segmentPath;

    @BeforeEach
    void writeSegment() throws Exception {
        segment = new TwoCheckpointSegment(new Path(dir.resolve("log").toUri()));
        segmentPath = segment.file.toString();
    }

    @Test
    void verifyOfAGoodLogExitsZero() {
        ToolRun run = ToolRun.of("verify", segmentPath);
        assertThat(run.exit).as(run.toString()).isEqualTo(0);
        assertThat(run.out).contains("2 batch(es)", "500 live entries", "0 problem(s)");
        assertThat(run.err).isEmpty();
    }

    @Test
    void inspectJsonDescribesSegmentsBatchesAndTotals() throws Exception {
        ToolRun run = ToolRun.of("inspect", "--json", dir.resolve("log").toUri().toString());
        assertThat(run.exit).as(run.toString()).isEqualTo(0);
        JsonNode json = run.json();
        assertThat(json.get("format").asInt()).isEqualTo(1);
        assertThat(json.get("command").asText()).isEqualTo("inspect");
        assertThat(json.get("checkpointId").isNull()).isTrue();
        assertThat(json.get("segments")).hasSize(1);
        assertThat(json.at("/segments/0/file").asText()).isEqualTo(segmentPath);
        assertThat(json.at("/segments/0/bytes").asLong())
                .isEqualTo(Files.size(dir.resolve("log").resolve(TwoCheckpointSegment.NAME)));
        JsonNode batches = json.get("batches");
        assertThat(batches).hasSize(2);
        for (int i = 0; i < 2; i++) {
            JsonNode batch = batches.get(i);
            assertThat(batch.get("offset").asLong()).isEqualTo(segment.batches.get(i).offset());
            assertThat(batch.get("length").asLong()).isEqualTo(segment.batches.get(i).length());
            assertThat(batch.get("checkpointId").asLong()).isEqualTo(i + 1);
            assertThat(batch.get("firstKeyGroup").asInt()).isEqualTo(0);
            assertThat(batch.get("lastKeyGroup").asInt()).isEqualTo(127);
            assertThat(batch.get("states").get(0).asText()).isEqualTo("counts");
        }
        assertThat(batches.get(0).get("records").asLong()).isEqualTo(TwoCheckpointSegment.KEYS);
        assertThat(batches.get(1).get("records").asLong()).isEqualTo(TwoCheckpointSegment.REWRITTEN);
        assertThat(json.get("problems")).isEmpty();
        JsonNode totals = json.get("totals");
        assertThat(totals.get("segments").asInt()).isEqualTo(1);
        assertThat(totals.get("batches").asInt()).isEqualTo(2);
        assertThat(totals.get("bytes").asLong())
                .isEqualTo(segment.batches.get(0).length() + segment.batches.get(1).length());
        assertThat(totals.get("liveEntries").asLong()).isEqualTo(TwoCheckpointSegment.KEYS);
        assertThat(totals.get("liveRatio").asDouble()).isBetween(0.0, 1.0);
        assertThat(totals.get("problems").asInt()).isEqualTo(0);
    }

    @Test
    void aDamagedByteExitsOneNamingFileAndOffset() throws Exception {
        long second = segment.batches.get(1).offset();
        segment.flipByteAt(second + segment.batches.get(1).length() / 2);

        ToolRun text = ToolRun.of("verify", segmentPath);
        RELIABILITY.record("verify: one byte of the second batch inverted", text.outcome());
        assertThat(text.exit).as(text.toString()).isEqualTo(1);
        assertThat(text.out).contains("PROBLEM " + "Corrupt state log " + segmentPath, "1 problem(s)");
        Matcher at = Pattern.compile("at offset (\\d+)").matcher(text.out);
        assertThat(at.find()).as(text.out).isTrue();
        assertThat(Long.parseLong(at.group(1)))
                .as("the damaged byte's block, inside the second batch")
                .isBetween(second, second + segment.batches.get(1).length() - 1);

        ToolRun json = ToolRun.of("verify", "--json", segmentPath);
        assertThat(json.exit).as(json.toString()).isEqualTo(1);
        JsonNode problems = json.json().get("problems");
        assertThat(problems).hasSize(1);
        assertThat(problems.get(0).get("file").asText()).isEqualTo(segmentPath);
        assertThat(problems.get(0).get("offset").asLong()).as("the damaged batch's offset").isEqualTo(second);
        assertThat(problems.get(0).get("message").asText()).contains(segmentPath, "key group");
        assertThat(json.json().at("/totals/problems").asInt()).isEqualTo(1);
        assertThat(json.json().at("/totals/batches").asInt()).isEqualTo(1);
    }

    @Test
    void usageErrorsExitTwoOnStandardError() {
        assertUsageError("no command", ToolRun.of(), "Missing command");
        assertUsageError("unknown command", ToolRun.of("repair", segmentPath), "repair");
        assertUsageError("no PATH", ToolRun.of("verify"), "PATH");
        assertUsageError("unknown option", ToolRun.of("verify", "--bogus", segmentPath), "--bogus");
        assertUsageError("empty PATH", ToolRun.of("inspect", ""), "PATH");
        assertUsageError("malformed PATH", ToolRun.of("verify", "hdfs://[nn/log"), "hdfs://[nn/log");
        assertUsageError(
                "--conf-dir not a directory",
                ToolRun.of("verify", "--conf-dir", dir.resolve("no-such-dir").toString(), segmentPath),
                "no-such-dir");
        assertUsageError(
                "--conf-dir without a Flink configuration file",
                ToolRun.of("verify", "--conf-dir", dir.toString(), segmentPath),
                "config.yaml");
    }

    private static void assertUsageError(String what, ToolRun run, String named) {
        RELIABILITY.record(what, run.outcome());
        assertThat(run.exit).as(run.toString()).isEqualTo(2);
        assertThat(run.err).as(run.toString()).contains(named).contains("Usage:");
        assertThat(run.out).isEmpty();
    }

    @Test
    void aMissingPathIsAToolFailure() {
        String missing = dir.resolve("no-such-log").toUri().toString();
        ToolRun run = ToolRun.of("verify", missing);
        RELIABILITY.record("PATH does not exist", run.outcome());
        assertThat(run.exit).as(run.toString()).isEqualTo(3);
        assertThat(run.err).contains("cannot read " + new Path(missing), "does not exist");
    }

    /**
     * The configuration directory is read: its default scheme sends a path without scheme to an
     * {@code hdfs://} NameNode that does not answer, which is a tool failure naming the path.
     */
    @Test
    void confDirConfiguresTheFileSystemsAndAnUnreachableNameNodeIsAToolFailure() throws Exception {
        String local = new File(segment.file.toUri().getPath()).getPath();
        assertThat(ToolRun.of("verify", local).exit).isEqualTo(0);

        int closedPort;
        try (ServerSocket socket = new ServerSocket(0)) {
            closedPort = socket.getLocalPort();
        }
        java.nio.file.Path conf = Files.createDirectories(dir.resolve("conf"));
        Files.writeString(
                conf.resolve("config.yaml"),
                "fs.default-scheme: hdfs://127.0.0.1:" + closedPort + "/\n"
                        + "flink.hadoop.ipc.client.connect.max.retries: 0\n");
        long start = System.nanoTime();
        ToolRun run = ToolRun.of("verify", "--conf-dir", conf.toString(), local);
        RELIABILITY.record("NameNode not listening (fs.default-scheme in --conf-dir)", run.outcome());
        assertThat(run.exit).as(run.toString()).isEqualTo(3);
        assertThat(run.err).contains("cannot read " + local, ":" + closedPort, "Connection refused");
        System.out.printf("unreachable NameNode reported after %d ms%n", (System.nanoTime() - start) / 1_000_000);
    }

    @Test
    void helpAndVersion() {
        ToolRun help = ToolRun.of("--help");
        assertThat(help.exit).isEqualTo(0);
        assertThat(help.out).contains("verify", "inspect", "Exit codes:", "tool failure");
        ToolRun verifyHelp = ToolRun.of("verify", "--help");
        assertThat(verifyHelp.exit).isEqualTo(0);
        assertThat(verifyHelp.out).contains("--json", "--conf-dir", "PATH");
        ToolRun version = ToolRun.of("--version");
        assertThat(version.exit).isEqualTo(0);
        assertThat(version.out).containsPattern("appendlog-log \\d+\\.\\d+\\.\\d+").contains("Flink 1.20");
    }
}
