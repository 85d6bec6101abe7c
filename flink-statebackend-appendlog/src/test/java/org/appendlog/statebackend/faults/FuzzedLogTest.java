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

package org.appendlog.statebackend.faults;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendHarness;
import org.appendlog.statebackend.faults.FaultHarness.Completed;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.tool.LogTool;
import org.appendlog.testing.MutationRun;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A seeded fuzz test of everything a restore reads: a small real log (checkpoints with a full
 * batch, incremental batches and a compaction run, LZ4) and its latest checkpoint's manifest,
 * mutated thousands of ways: every header and footer field and every LZ4 block's length set to
 * 0, -1, 2^31-1 (and the longest long) or a bit flipped in it, bits flipped at random and in
 * every manifest byte, truncations at every batch, header and footer boundary. Each case runs
 * the restore (in-process) and, on a segment, {@code LogTool verify}; each must end in an exact
 * restore or an error naming the damaged file and an offset: never an {@link Error} (the heap
 * is 2 GB, so a 4 GB allocation fails the test), another unchecked exception, a wrong value, or
 * a case running past its timeout ({@link MutationRun}).
 *
 * <p>The seed is printed; {@code -Dappendlog.fuzz.seed=N} repeats a run.
 */
class FuzzedLogTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("fuzzed-log");
    private static final int KEYS = 400;
    /** Random bit flips per segment, and a fifth as many in the manifest, besides every field's. */
    private static final int RANDOM_FLIPS = 300;

    @TempDir static Path dir;

    @Test
    void everyMutationRestoresExactlyOrFailsNamingTheFileAndOffset() throws Exception {
        MutationRun run = new MutationRun("FuzzedLogTest");
        String checkpointDir = dir.resolve("checkpoints").toUri().toString();
        Completed latest = writeLog(checkpointDir);
        List<Path> segments = new ArrayList<>();
        for (HandleAndLocalPath h : latest.handle.getSharedState()) {
            segments.add(Paths.get(((FileStateHandle) h.getHandle()).getFilePath().toUri()));
        }
        for (HandleAndLocalPath h : latest.handle.getPrivateState()) {
            segments.add(Paths.get(((FileStateHandle) h.getHandle()).getFilePath().toUri()));
        }
        Path manifest =
                Paths.get(((FileStateHandle) latest.handle.getMetaDataStateHandle()).getFilePath().toUri());
        assertThat(segments).as("segments of the latest checkpoint").hasSizeGreaterThan(1);
        assertThat(segments).as("a compaction run among them").anyMatch(p -> p.getFileName().toString().contains("-run-"));
        int batches = 0;
        for (Path segment : segments) {
            batches += segmentMutations(segment, run);
        }
        manifestMutations(manifest, run);
        System.out.printf("FuzzedLogTest: %d segments (%d batches) and the manifest%n", segments.size(), batches);

        // Restores read nothing of the writer's log directory but what the handles name.
        AppendLogStateBackend restoring = backend(dir.resolve("restore-log"), false);
        FaultHarness.assertRestoresExactly(restoring, checkpointDir, latest);
        List<String> violations =
                run.run(
                        RELIABILITY,
                        List.of(
                                m -> restore(restoring, checkpointDir, latest, m),
                                m -> m.file.equals(manifest) ? "verify not run (a manifest)" : verify(m)));
        assertThat(violations)
                .as("cases that neither restored exactly nor failed naming the file and offset (seed %d)", run.seed())
                .isEmpty();
    }

    /**
     * Checkpoints 1 and 2 put every key (2: a full batch), 3 to 6 a quarter each; compaction
     * merges them into a run, which checkpoint 7 lists. A restored attempt without compaction
     * then adds checkpoints 8 to 11 of a quarter each.
     */
    private static Completed writeLog(String checkpointDir) throws Exception {
        Completed compacted;
        try (FaultHarness writer = FaultHarness.open(backend(dir.resolve("log"), true), checkpointDir)) {
            for (int c = 1; c <= 6; c++) {
                changeKeys(writer, c);
                writer.checkpoint(c);
                BackendHarness.awaitCompaction(writer.backend);
            }
            compacted = writer.checkpoint(7);
        }
        Completed latest;
        try (FaultHarness writer = FaultHarness.restore(backend(dir.resolve("log"), false), checkpointDir, compacted)) {
            for (int c = 8; c < 11; c++) {
                changeKeys(writer, c);
                writer.checkpoint(c);
            }
            changeKeys(writer, 11);
            latest = writer.checkpoint(11);
        }
        return latest;
    }

    private static void changeKeys(FaultHarness writer, int checkpoint) throws Exception {
        for (int key = 0; key < KEYS; key++) {
            if (checkpoint <= 2 || key % 4 == checkpoint % 4) {
                writer.put(key, checkpoint * 100_000L + key);
            }
        }
        writer.remove(checkpoint * 13);
    }

    private static AppendLogStateBackend backend(Path logDir, boolean compaction) {
        Configuration config = new Configuration();
        config.set(AppendLogOptions.LOG_DIR, logDir.toUri().toString());
        config.setString(AppendLogOptions.SEGMENT_SIZE.key(), "4kb");
        config.set(AppendLogOptions.FULL_CHECKPOINT_RATIO, 0.5);
        config.set(AppendLogOptions.COMPACTION_ENABLED, compaction);
        config.set(AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO, 0.1);
        return new AppendLogStateBackend().configure(config, FuzzedLogTest.class.getClassLoader());
    }

    /** Adds the mutations of {@code segment}; returns its batches. */
    private static int segmentMutations(Path segment, MutationRun run) throws Exception {
        byte[] bytes = Files.readAllBytes(segment);
        String seg = "segment";
        run.truncation(segment, seg, "empty file", 0, true);
        run.truncation(segment, seg, "inside the segment header", 4, false);
        run.field(segment, seg + " header", "magic", 0, 4);
        run.field(segment, seg + " header", "format version", 4, 4);
        int batches = 0;
        long offset = BatchFormat.SEGMENT_HEADER_BYTES;
        while (offset < bytes.length) {
            batches++;
            DataInputDeserializer in = new DataInputDeserializer(bytes, (int) offset, bytes.length - (int) offset);
            in.skipBytesToRead(4);
            int version = in.readByte();
            in.skipBytesToRead(16);
            int firstKg = in.readInt();
            int groups = in.readInt() - firstKg + 1;
            in.skipBytesToRead(8);
            int states = in.readInt();
            for (int i = 0; i < states; i++) {
                in.readUTF();
            }
            assertThat(version).as("format of the batch at %d of %s (LZ4)", offset, segment).isEqualTo(3);
            int compressionAt = in.getPosition() - (int) offset;
            in.skipBytesToRead(1);
            long stored = in.readLong();
            in.skipBytesToRead(8);
            int headerLength = in.getPosition() - (int) offset;
            int footerBytes = groups * 16 + 12;
            long footerStart = offset + headerLength + stored;
            long batchEnd = footerStart + footerBytes;
            String b = "batch " + batches;
            int[] headerOffsets = {0, 4, 5, 13, 21, 25, 29, 37, 41};
            String[] headerNames = {"magic", "version", "checkpoint id", "oldest record id", "first key group", "last key group", "record count", "state count", "state name length"};
            int[] widths = {4, 1, 8, 8, 4, 4, 8, 4, 2};
            for (int f = 0; f < headerOffsets.length; f++) {
                run.field(segment, "batch header", b + " " + headerNames[f], offset + headerOffsets[f], widths[f]);
            }
            run.field(segment, "batch header", b + " compression", offset + compressionAt, 1);
            run.field(segment, "batch header", b + " stored body length", offset + compressionAt + 1, 8);
            run.field(segment, "batch header", b + " raw body length", offset + compressionAt + 9, 8);
            Set<Integer> sampled = new TreeSet<>(List.of(0, 1, groups / 2, groups - 1, run.random().nextInt(groups), run.random().nextInt(groups)));
            DataInputDeserializer footer = new DataInputDeserializer();
            for (int kg : sampled) {
                long entry = footerStart + kg * 16L;
                run.field(segment, "batch footer", b + " key group #" + kg + " offset", entry, 8);
                run.field(segment, "batch footer", b + " key group #" + kg + " length", entry + 8, 4);
                run.field(segment, "batch footer", b + " key group #" + kg + " CRC", entry + 12, 4);
                footer.setBuffer(bytes, (int) entry, 12);
                long kgOffset = footer.readLong();
                int kgLength = footer.readInt();
                if (kgLength > 4) {
                    run.field(segment, "LZ4 block", b + " key group #" + kg + " raw length", offset + kgOffset, 4);
                }
            }
            run.field(segment, "batch footer", b + " header length", batchEnd - 12, 4);
            run.field(segment, "batch footer", b + " CRC", batchEnd - 8, 4);
            run.field(segment, "batch footer", b + " magic", batchEnd - 4, 4);
            run.truncation(segment, seg, b + " start", offset, true);
            run.truncation(segment, seg, b + " first byte", offset + 1, false);
            run.truncation(segment, seg, b + " header end", offset + headerLength, false);
            run.truncation(segment, seg, b + " footer start", footerStart, false);
            run.truncation(segment, seg, b + " inside the footer", footerStart + footerBytes / 2, false);
            run.truncation(segment, seg, b + " last byte", batchEnd - 1, false);
            offset = batchEnd;
        }
        run.randomFlips(segment, "segment: random bit flip", RANDOM_FLIPS);
        return batches;
    }

    /** Every byte of the manifest flipped, its lengths and counts set, truncations at its fields. */
    private static void manifestMutations(Path manifest, MutationRun run) throws Exception {
        byte[] bytes = Files.readAllBytes(manifest);
        for (int at = 0; at < bytes.length; at++) {
            run.flip(manifest, "manifest: a bit flipped in every byte", "byte " + at, at);
        }
        run.randomFlips(manifest, "manifest: random bit flip", RANDOM_FLIPS / 5);
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        in.skipBytesToRead(8);
        new KeyedBackendSerializationProxy<>(FuzzedLogTest.class.getClassLoader()).read(in);
        List<long[]> fields = new ArrayList<>(); // {offset, width}
        List<String> names = new ArrayList<>();
        fields.add(new long[] {0, 4});
        names.add("magic");
        fields.add(new long[] {4, 4});
        names.add("version");
        fields.add(new long[] {in.getPosition(), 4});
        names.add("timers length");
        in.skipBytesToRead(in.readInt());
        fields.add(new long[] {in.getPosition(), 4});
        names.add("batch count");
        int count = in.readInt();
        for (int i = 0; i < count; i++) {
            fields.add(new long[] {in.getPosition(), 2});
            names.add("batch " + i + " segment name length");
            in.readUTF();
            String[] location = {"offset", "length", "checkpoint id", "oldest record id"};
            for (String name : location) {
                fields.add(new long[] {in.getPosition(), 8});
                names.add("batch " + i + " " + name);
                in.readLong();
            }
            fields.add(new long[] {in.getPosition(), 4});
            names.add("batch " + i + " first key group");
            in.readInt();
            fields.add(new long[] {in.getPosition(), 4});
            names.add("batch " + i + " last key group");
            in.readInt();
        }
        fields.add(new long[] {in.getPosition(), 1});
        names.add("lineage run flag");
        if (in.readBoolean()) {
            fields.add(new long[] {in.getPosition(), 2});
            names.add("lineage run length");
            in.readUTF();
        }
        fields.add(new long[] {in.getPosition(), 4});
        names.add("lineage writer count");
        int writers = in.readInt();
        for (int i = 0; i < writers; i++) {
            fields.add(new long[] {in.getPosition() + 16, 8});
            names.add("writer " + i + " last checkpoint id");
            in.skipBytesToRead(24);
        }
        fields.add(new long[] {in.getPosition(), 4});
        names.add("CRC32C");
        assertThat(in.getPosition() + 4).as("the manifest ends with its CRC32C").isEqualTo(bytes.length);
        for (int f = 0; f < fields.size(); f++) {
            long[] field = fields.get(f);
            run.field(manifest, "manifest", names.get(f), field[0], (int) field[1]);
            run.truncation(manifest, "manifest", "at " + names.get(f), field[0], false);
        }
    }

    /** Restores the latest checkpoint from the damaged files: exactly, or failing as it must. */
    private static String restore(AppendLogStateBackend backend, String checkpointDir, Completed latest, MutationRun.Mutation m)
            throws MutationRun.Violation {
        try (FaultHarness restored = FaultHarness.restore(backend, checkpointDir, latest)) {
            Map<Integer, Long> contents = restored.contents();
            if (!contents.equals(latest.state)) {
                throw new MutationRun.Violation("wrong state restored: " + contents.size() + " entries, expected " + latest.state.size());
            }
            return "restore exactly";
        } catch (MutationRun.Violation v) {
            throw v;
        } catch (Throwable t) {
            return "restore fails naming the file and offset: " + MutationRun.namesFileAndOffset(t, m);
        }
    }

    /**
     * Runs {@code LogTool verify} on the damaged segment: each problem it prints names the file
     * and an offset, and it finds one unless the damage left whole batches or another valid
     * segment header.
     */
    private static String verify(MutationRun.Mutation m) throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        int problems = new LogTool(new PrintStream(printed, true, StandardCharsets.UTF_8))
                .run(false, new org.apache.flink.core.fs.Path(m.file.toUri()));
        String file = m.file.getFileName().toString();
        for (String line : printed.toString(StandardCharsets.UTF_8).split("\n")) {
            if (line.startsWith("PROBLEM") && !(line.contains(file) && line.matches(".* at offset \\d+.*"))) {
                throw new MutationRun.Violation("verify printed: " + line);
            }
        }
        if (problems > 0) {
            return "verify reports it";
        }
        if (m.leavesWholeUnits) {
            return "verify finds whole batches";
        }
        if (m.offset >= 4 && m.offset < 8 && BatchFormat.isReadableVersion(new DataInputDeserializer(Files.readAllBytes(m.file), 4, 4).readInt())) {
            // 3 flipped to 2: a segment header of an earlier version, as valid.
            return "verify finds another valid segment format version";
        }
        throw new MutationRun.Violation("verify found nothing wrong");
    }
}
