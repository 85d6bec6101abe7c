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
import org.appendlog.testing.MiniHdfs;

import org.apache.flink.core.fs.Path;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;

import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import static org.assertj.core.api.Assertions.assertThat;

/** {@code appendlog-log} on {@code hdfs://} (a NameNode and a DataNode in this JVM). */
class LogToolCommandOnHdfsTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("log-tool-hdfs");

    @TempDir private static java.nio.file.Path tempFolder;
    private static MiniHdfs hdfs;

    @BeforeAll
    static void startHdfs() throws Exception {
        hdfs = new MiniHdfs(tempFolder.resolve("hdfs"));
    }

    @AfterAll
    static void stopHdfs() {
        if (hdfs != null) {
            hdfs.close();
        }
    }

    @Test
    void verifiesAndDescribesALogOnHdfs() throws Exception {
        String dir = hdfs.root() + "/flink/appendlog/good";
        TwoCheckpointSegment segment = new TwoCheckpointSegment(new Path(dir));

        ToolRun text = ToolRun.of("inspect", dir);
        RELIABILITY.record("inspect a good log directory", text.outcome());
        assertThat(text.exit).as(text.toString()).isEqualTo(0);
        assertThat(text.out)
                .contains("segment " + segment.file, "2 batch(es)", "500 live entries", "0 problem(s)");

        ToolRun json = ToolRun.of("verify", "--json", dir);
        assertThat(json.exit).as(json.toString()).isEqualTo(0);
        JsonNode root = json.json();
        assertThat(root.at("/segments/0/file").asText()).isEqualTo(segment.file.toString());
        assertThat(root.at("/totals/batches").asInt()).isEqualTo(2);
        assertThat(root.at("/batches/1/records").asLong()).isEqualTo(TwoCheckpointSegment.REWRITTEN);
        assertThat(root.at("/totals/liveEntries").asLong()).isEqualTo(TwoCheckpointSegment.KEYS);
    }

    @Test
    void namesTheHdfsFileAndOffsetOfADamagedByte() throws Exception {
        TwoCheckpointSegment segment = new TwoCheckpointSegment(new Path(hdfs.root() + "/flink/appendlog/damaged"));
        long first = segment.batches.get(0).offset();
        segment.flipByteAt(first + segment.batches.get(0).length() / 2);

        ToolRun text = ToolRun.of("verify", segment.file.toString());
        RELIABILITY.record("verify: one byte of the first batch inverted", text.outcome());
        assertThat(text.exit).as(text.toString()).isEqualTo(1);
        assertThat(text.out).contains("PROBLEM Corrupt state log " + segment.file, "1 problem(s)");

        ToolRun run = ToolRun.of("verify", "--json", segment.file.toString());
        assertThat(run.exit).as(run.toString()).isEqualTo(1);
        JsonNode problem = run.json().at("/problems/0");
        assertThat(problem.get("file").asText()).isEqualTo(segment.file.toString()).startsWith("hdfs://");
        assertThat(problem.get("offset").asLong()).isEqualTo(first);
        assertThat(run.json().at("/totals/batches").asInt()).as("the second batch is still read").isEqualTo(1);
    }
}
