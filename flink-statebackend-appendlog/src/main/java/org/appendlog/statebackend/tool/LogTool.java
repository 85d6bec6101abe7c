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

import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchFormat.BatchIndex;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.LogScanner;
import org.appendlog.statebackend.log.LogScanner.Batch;
import org.appendlog.statebackend.log.RecordCursor;
import org.appendlog.statebackend.restore.RestoredCheckpoint;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.checkpoint.Checkpoints;
import org.apache.flink.runtime.checkpoint.OperatorState;
import org.apache.flink.runtime.checkpoint.OperatorSubtaskState;
import org.apache.flink.runtime.checkpoint.metadata.CheckpointMetadata;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import java.io.DataInputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * The operator's tool for the state log, as Kafka has {@code kafka-dump-log} and RocksDB {@code
 * sst_dump}.
 *
 * <pre>
 * appendlog-log verify  PATH   checks every batch (CRCs, footer, key-group table); exit 1 on a problem
 * appendlog-log inspect PATH   prints segments, batches, checkpoint ids, key groups, records, live ratio
 * </pre>
 *
 * PATH is a segment file, a directory (every {@code .seg} below it) or a checkpoint's {@code
 * _metadata} (the batches its append-log handles list, and with {@code inspect} the files they
 * refer to), on any Flink file system that the caller has initialised. It prints text as it goes
 * and collects a {@link LogReport}; the command line ({@code appendlog-log-tool}) parses the
 * arguments, configures the file systems and chooses between the text and JSON.
 */
public final class LogTool {

    private final PrintStream out;
    private final LogReport report = new LogReport();
    /** Per state and serialized key and namespace: checkpoint id and length of the latest record. */
    private final Map<String, long[]> latest = new HashMap<>();

    /** @param out where the text goes as the tool reads */
    public LogTool(PrintStream out) {
        this.out = out;
    }

    /**
     * Checks (and with {@code inspect} describes) everything at {@code path}; returns the number of
     * problems found. An exception means the tool could not read {@code path} itself (missing,
     * unreachable file system, I/O error), not that the log is damaged.
     */
    public int run(boolean inspect, Path path) throws Exception {
        FileSystem fs = path.getFileSystem();
        if (path.getName().equals("_metadata")) {
            runOnCheckpoint(inspect, path, fs);
        } else {
            for (Path segment : segmentsUnder(fs, path)) {
                runOnSegment(inspect, fs, segment);
            }
        }
        for (long[] record : latest.values()) {
            report.liveRecordBytes += record[1];
            report.liveEntries += record[1] > 0 ? 1 : 0;
        }
        out.printf(
                "%d batch(es), %d bytes (%d uncompressed), %d live entries, %d live record bytes (live ratio %.3f), %d problem(s)%n",
                report.batches().size(),
                report.totalBytes,
                report.uncompressedBytes,
                report.liveEntries,
                report.liveRecordBytes,
                report.liveRatio(),
                report.problems().size());
        return report.problems().size();
    }

    /** What the last {@link #run} found. */
    public LogReport report() {
        return report;
    }

    private static List<Path> segmentsUnder(FileSystem fs, Path path) throws IOException {
        List<Path> segments = new ArrayList<>();
        FileStatus status = fs.getFileStatus(path);
        if (!status.isDir()) {
            segments.add(path);
            return segments;
        }
        for (FileStatus child : fs.listStatus(path)) {
            if (child.isDir() || child.getPath().getName().endsWith(".seg")) {
                segments.addAll(segmentsUnder(fs, child.getPath()));
            }
        }
        segments.sort(java.util.Comparator.comparing(Path::toString));
        return segments;
    }

    private void runOnSegment(boolean inspect, FileSystem fs, Path segment) throws IOException {
        long length = fs.getFileStatus(segment).getLen();
        String file = segment.toString();
        report.add(new LogReport.Segment(file, length));
        if (inspect) {
            out.printf("segment %s (%d bytes)%n", file, length);
        }
        List<BatchLocation> found = new ArrayList<>();
        try (FSDataInputStream in = fs.open(segment)) {
            DataInputStream header = new DataInputStream(in);
            if (length < BatchFormat.SEGMENT_HEADER_BYTES
                    || header.readInt() != BatchFormat.SEGMENT_MAGIC) {
                problem(file, 0, "not a state log segment (no segment header)");
                return;
            }
            int version = header.readInt();
            if (!BatchFormat.isReadableVersion(version)) {
                problem(file, 4, "unknown segment format version " + version);
                return;
            }
            long offset = BatchFormat.SEGMENT_HEADER_BYTES;
            while (offset < length) {
                try {
                    BatchLocation location =
                            BatchFormat.locate(in, file, segment.getName(), offset, length);
                    found.add(location);
                    offset += location.length();
                } catch (IOException e) {
                    problem(file, offset, e.getMessage());
                    break;
                }
            }
        }
        StreamStateHandle handle = new FileStateHandle(segment, length);
        Map<String, StreamStateHandle> handles = new HashMap<>();
        handles.put(segment.getName(), handle);
        checkBatches(inspect, found, handles);
    }

    private void runOnCheckpoint(boolean inspect, Path metadata, FileSystem fs) throws Exception {
        CheckpointMetadata checkpoint;
        try (DataInputStream in = new DataInputStream(fs.open(metadata))) {
            checkpoint =
                    Checkpoints.loadCheckpointMetadata(
                            in, LogTool.class.getClassLoader(), metadata.getParent().toString());
        }
        report.checkpointId = checkpoint.getCheckpointId();
        out.printf("checkpoint %d (%s)%n", checkpoint.getCheckpointId(), metadata);
        for (OperatorState operator : checkpoint.getOperatorStates()) {
            for (Map.Entry<Integer, OperatorSubtaskState> subtask : operator.getSubtaskStates().entrySet()) {
                for (KeyedStateHandle keyed : subtask.getValue().getManagedKeyedState()) {
                    if (!(keyed instanceof IncrementalRemoteKeyedStateHandle)
                            || !RestoredCheckpoint.isAppendLog((IncrementalRemoteKeyedStateHandle) keyed)) {
                        continue;
                    }
                    RestoredCheckpoint restored =
                            RestoredCheckpoint.read(
                                    (IncrementalRemoteKeyedStateHandle) keyed,
                                    LogTool.class.getClassLoader());
                    for (StreamStateHandle segment : restored.segments().values()) {
                        report.add(new LogReport.Segment(LogScanner.describe(segment), segment.getStateSize()));
                    }
                    if (inspect) {
                        out.printf(
                                "operator %s subtask %d: key groups %s, %d batch(es) in %d segment(s)%n",
                                operator.getOperatorID(),
                                subtask.getKey(),
                                keyed.getKeyGroupRange(),
                                restored.manifest().batches().size(),
                                restored.segments().size());
                        for (StreamStateHandle segment : restored.segments().values()) {
                            out.printf("  refers to %s%n", LogScanner.describe(segment));
                        }
                    }
                    checkBatches(inspect, restored.manifest().batches(), restored.segments());
                }
            }
        }
    }

    /** Verifies each batch in full (header, footer, every key group's CRC) and collects liveness. */
    private void checkBatches(
            boolean inspect, List<BatchLocation> locations, Map<String, StreamStateHandle> handles) {
        for (BatchLocation location : locations) {
            StreamStateHandle handle = handles.get(location.segment());
            String file = handle == null ? location.segment() : LogScanner.describe(handle);
            try {
                List<Batch> opened = LogScanner.openBatches(List.of(location), handles::get);
                Batch batch = opened.get(0);
                BatchIndex index = batch.index;
                long[] count = {0};
                RecordCursor cursor = new RecordCursor();
                LogScanner.read(
                        opened,
                        location.keyGroups(),
                        LogScanner.ReadGate.NONE,
                        (b, kg, records) -> {
                            cursor.reset(records);
                            while (cursor.next()) {
                                count[0]++;
                                track(b, cursor);
                            }
                        });
                if (count[0] != index.recordCount) {
                    problem(file, location.offset(), "header counts " + index.recordCount + " records, the batch holds " + count[0]);
                }
                LogReport.Batch read =
                        new LogReport.Batch(
                                file,
                                location.offset(),
                                location.length(),
                                index.location.checkpointId(),
                                index.location.minCheckpointId(),
                                location.keyGroups().getStartKeyGroup(),
                                location.keyGroups().getEndKeyGroup(),
                                count[0],
                                index.stateNames);
                report.add(read);
                report.totalBytes += location.length();
                report.uncompressedBytes += index.location.rawLength();
                if (inspect) {
                    out.println("  " + read.describe());
                }
            } catch (IOException | InterruptedException e) {
                problem(file, location.offset(), e.getMessage());
            }
        }
    }

    private void track(Batch batch, RecordCursor record) throws IOException {
        String key =
                batch.stateName(record)
                        + "/"
                        + java.util.Base64.getEncoder()
                                .encodeToString(
                                        Arrays.copyOfRange(
                                                record.bytes(),
                                                record.keyOffset(),
                                                record.keyOffset() + record.keyLength()));
        long[] previous = latest.get(key);
        if (previous == null || previous[0] <= record.checkpointId()) {
            latest.put(key, new long[] {record.checkpointId(), record.isTombstone() ? 0 : record.encodedLength()});
        }
    }

    private void problem(String file, long offset, String what) {
        report.add(new LogReport.Problem(file, offset, what));
        String message = what != null && what.startsWith("Corrupt state log") ? what : "Problem in " + file + " at offset " + offset + ": " + what;
        out.println("PROBLEM " + message);
    }
}
