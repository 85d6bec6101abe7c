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

package org.appendlog.statebackend.tool;

import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendHarness;
import org.appendlog.statebackend.log.BatchCompression;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchStream;
import org.appendlog.statebackend.log.RecordFormat;

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.jobgraph.OperatorID;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyGroupRange;

import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.Collections;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

class LogToolTest {

    @TempDir java.nio.file.Path dir;
    private IncrementalRemoteKeyedStateHandle second;
    private java.nio.file.Path segment;

    /** Two checkpoints: 1 000 keys, then 100 of them rewritten (so 100 records are dead). */
    @BeforeEach
    void writeLog() throws Exception {
        AppendLogStateBackend backend =
                new AppendLogStateBackend(dir.resolve("log").toUri().toString());
        try (BackendHarness harness =
                BackendHarness.open(backend, BackendHarness.newRegistry())) {
            for (int key = 0; key < 1_000; key++) {
                harness.put(key, key);
            }
            harness.checkpoint(1);
            for (int key = 0; key < 100; key++) {
                harness.put(key, -key);
            }
            second = harness.checkpoint(2);
        }
        try (Stream<java.nio.file.Path> files = Files.walk(dir.resolve("log"))) {
            List<java.nio.file.Path> segments =
                    files.filter(p -> p.toString().endsWith(".seg")).collect(Collectors.toList());
            assertThat(segments).hasSize(1);
            segment = segments.get(0);
        }
    }

    private String run(boolean inspect, java.nio.file.Path path, int expectedProblems)
            throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        int problems =
                new LogTool(new PrintStream(bytes, true, StandardCharsets.UTF_8))
                        .run(inspect, new Path(path.toUri()));
        String output = bytes.toString(StandardCharsets.UTF_8);
        assertThat(problems).as(output).isEqualTo(expectedProblems);
        return output;
    }

    @Test
    void verifyPassesACleanLogAndInspectDescribesIt() throws Exception {
        assertThat(run(false, segment, 0)).contains("2 batch(es)", "0 problem(s)");
        String inspect = run(true, dir.resolve("log"), 0);
        assertThat(inspect)
                .contains("segment file:" + segment.toUri().getPath())
                .contains("checkpoint 1 (records from 1), key groups 0-127, 1000 records, states [counts]")
                .contains("checkpoint 2 (records from 2), key groups 0-127, 100 records")
                .contains("1000 live entries");
    }

    @Test
    void verifyReportsAFlippedByteWithFileAndOffset() throws Exception {
        long offset = segment.toFile().length() / 3;
        try (RandomAccessFile file = new RandomAccessFile(segment.toFile(), "rw")) {
            file.seek(offset);
            int b = file.read();
            file.seek(offset);
            file.write(b ^ 0x5A);
        }
        String output = run(false, segment, 1);
        assertThat(output).contains("PROBLEM", segment.getFileName().toString(), "at offset");
    }

    @Test
    void verifyReportsATornTail() throws Exception {
        try (RandomAccessFile file = new RandomAccessFile(segment.toFile(), "rw")) {
            file.setLength(file.length() - 7);
        }
        assertThat(run(false, segment, 1)).contains("cut off");
    }

    @Test
    void verifyChecksTheBatchesACheckpointListsFromItsMetadata() throws Exception {
        OperatorState operator = new OperatorState(new OperatorID(), 1, 128);
        operator.putState(0, OperatorSubtaskState.builder().setManagedKeyedState(second).build());
        java.nio.file.Path metadata = dir.resolve("chk-2").resolve("_metadata");
        Files.createDirectories(metadata.getParent());
        try (DataOutputStream out = new DataOutputStream(Files.newOutputStream(metadata))) {
            Checkpoints.storeCheckpointMetadata(
                    new CheckpointMetadata(2, List.of(operator), Collections.emptyList()), out);
        }
        String output = run(true, metadata, 0);
        assertThat(output).contains("checkpoint 2", "2 batch(es) in 1 segment(s)", "1000 live entries");

        Files.delete(segment);
        assertThat(run(false, metadata, 2)).contains("missing");
    }

    /**
     * A streamed batch (format 4: full batches, native savepoints) gives no lengths in its
     * header: verify finds its end by stepping over the frames of its blocks.
     */
    @Test
    void verifyStepsOverTheBlocksOfStreamedBatches() throws Exception {
        java.nio.file.Path streamed = dir.resolve("streamed.seg");
        try (OutputStream out = Files.newOutputStream(streamed)) {
            out.write(BatchFormat.segmentHeader());
            long position = BatchFormat.SEGMENT_HEADER_BYTES;
            for (BatchCompression compression : BatchCompression.values()) {
                BatchStream batch =
                        new BatchStream(
                                out,
                                "streamed.seg",
                                position,
                                5,
                                KeyGroupRange.of(0, 127),
                                List.of("counts"),
                                compression,
                                256);
                byte[] value = new byte[100];
                for (int kg = 0; kg < 128; kg += 2) {
                    for (int i = 0; i < 10; i++) {
                        byte[] key = ("key " + kg + "/" + i).getBytes(StandardCharsets.UTF_8);
                        RecordFormat.write(batch, kg, 5, 0, key, 0, key.length, value, 0, value.length);
                    }
                }
                position += batch.finish().length();
            }
        }
        assertThat(run(true, streamed, 0))
                .contains("2 batch(es)")
                .contains("checkpoint 5 (records from 5), key groups 0-127, 640 records");

        try (RandomAccessFile file = new RandomAccessFile(streamed.toFile(), "rw")) {
            file.setLength(file.length() - 7);
        }
        assertThat(run(false, streamed, 1)).contains("cut off");
    }
}
