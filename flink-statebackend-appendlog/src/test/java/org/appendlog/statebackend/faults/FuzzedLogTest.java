package org.appendlog.statebackend.faults;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendHarness;
import org.appendlog.statebackend.faults.FaultHarness.Completed;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.CorruptLogException;
import org.appendlog.statebackend.tool.LogTool;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.PrintStream;
import java.io.RandomAccessFile;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.TreeSet;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;

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
 * a case running past {@link #CASE_TIMEOUT_SECONDS}.
 *
 * <p>The seed is printed; {@code -Dappendlog.fuzz.seed=N} repeats a run.
 */
class FuzzedLogTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("fuzzed-log");
    private static final long SEED = Long.getLong("appendlog.fuzz.seed", System.nanoTime());
    private static final int KEYS = 400;
    /** Random bit flips per segment and per manifest, besides those of every field. */
    private static final int RANDOM_FLIPS = 300;
    private static final int CASE_TIMEOUT_SECONDS = 20;
    private static final int INT_MAX = Integer.MAX_VALUE;

    @TempDir static Path dir;

    /** One way to damage one file. */
    private static final class Mutation {
        final Path file;
        /** What kind of damage, as the summary counts it. */
        final String kind;
        final String where;
        final long offset;
        /** Written at {@link #offset}; null for a truncation to {@link #offset} bytes. */
        final byte[] bytes;
        /** A truncation that leaves whole batches: {@code LogTool verify} may find nothing. */
        final boolean atBatchBoundary;

        Mutation(Path file, String kind, String where, long offset, byte[] bytes, boolean atBatchBoundary) {
            this.file = file;
            this.kind = kind;
            this.where = where;
            this.offset = offset;
            this.bytes = bytes;
            this.atBatchBoundary = atBatchBoundary;
        }

        @Override
        public String toString() {
            return kind + " at offset " + offset + " of " + file.getFileName() + " (" + where + ")";
        }
    }

    /** Outcomes of the cases of one kind of damage. */
    private static final class Tally {
        int cases;
        int exact;
        int failed;
        int verifyRuns;
        int verifyReported;
        String example;
    }

    @Test
    void everyMutationRestoresExactlyOrFailsNamingTheFileAndOffset() throws Exception {
        System.out.println("FuzzedLogTest seed " + SEED + " (-Dappendlog.fuzz.seed=" + SEED + " repeats it)");
        Random random = new Random(SEED);
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

        List<Mutation> mutations = new ArrayList<>();
        int batches = 0;
        for (Path segment : segments) {
            batches += segmentMutations(segment, random, mutations);
        }
        manifestMutations(manifest, random, mutations);

        // Restores read nothing of the writer's log directory but what the handles name.
        AppendLogStateBackend restoring = backend(dir.resolve("restore-log"), false);
        FaultHarness.assertRestoresExactly(restoring, checkpointDir, latest);

        Map<Path, byte[]> pristine = new LinkedHashMap<>();
        for (Path file : segments) {
            pristine.put(file, Files.readAllBytes(file));
        }
        pristine.put(manifest, Files.readAllBytes(manifest));

        Map<String, Tally> tallies = new LinkedHashMap<>();
        List<String> violations = new ArrayList<>();
        ExecutorService runner = Executors.newSingleThreadExecutor(r -> {
            Thread t = new Thread(r, "fuzzed-log case");
            t.setDaemon(true);
            return t;
        });
        long start = System.nanoTime();
        try {
            for (Mutation m : mutations) {
                byte[] original = pristine.get(m.file);
                if (m.bytes != null && unchanged(original, m)) {
                    continue;
                }
                apply(m, original);
                Tally tally = tallies.computeIfAbsent(m.kind, k -> new Tally());
                tally.cases++;
                String restoreFailure = runCase(runner, () -> restore(restoring, checkpointDir, latest, m));
                if (restoreFailure == null) {
                    tally.exact++;
                } else if (restoreFailure.startsWith("VIOLATION")) {
                    violations.add(m + ": " + restoreFailure);
                } else {
                    tally.failed++;
                    if (tally.example == null) {
                        tally.example = restoreFailure;
                    }
                }
                if (!m.file.equals(manifest)) {
                    tally.verifyRuns++;
                    String verify = runCase(runner, () -> verify(m));
                    if (verify != null && verify.startsWith("VIOLATION")) {
                        violations.add(m + ": LogTool " + verify);
                    } else if (verify != null) {
                        tally.verifyReported++;
                    }
                }
                Files.write(m.file, original);
                if (violations.size() >= 20) {
                    break;
                }
            }
        } finally {
            runner.shutdownNow();
            pristine.forEach((file, bytes) -> {
                try {
                    Files.write(file, bytes);
                } catch (Exception e) {
                    throw new IllegalStateException(e);
                }
            });
        }
        long millis = (System.nanoTime() - start) / 1_000_000;
        int cases = tallies.values().stream().mapToInt(t -> t.cases).sum();
        System.out.printf(
                "FuzzedLogTest seed %d: %d cases on %d segments (%d batches) and the manifest in %d ms%n",
                SEED, cases, segments.size(), batches, millis);
        tallies.forEach((kind, t) -> {
            System.out.printf(
                    "  %-48s %5d cases: %5d restore exactly, %5d fail naming the file and offset; verify reports %d of %d%n",
                    kind, t.cases, t.exact, t.failed, t.verifyReported, t.verifyRuns);
            RELIABILITY.record(
                    kind,
                    t.cases + " cases: " + t.exact + " restore exactly, " + t.failed
                            + " fail naming the file and offset"
                            + (t.verifyRuns == 0 ? "" : "; LogTool verify reports " + t.verifyReported + " of " + t.verifyRuns)
                            + (t.example == null ? "" : "; e.g. " + t.example));
        });
        RELIABILITY.record(
                "all cases (seed " + SEED + ")",
                cases + " cases, " + violations.size() + " with an Error, another unchecked exception, a wrong value or a hang");
        assertThat(violations).as("cases that neither restored exactly nor failed naming the file and offset (seed %d)", SEED).isEmpty();
        assertThat(cases).isGreaterThan(2_000);
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
    private static int segmentMutations(Path segment, Random random, List<Mutation> out) throws Exception {
        byte[] bytes = Files.readAllBytes(segment);
        String seg = "segment";
        out.add(truncation(segment, seg, "empty file", 0, true));
        out.add(truncation(segment, seg, "inside the segment header", 4, false));
        field(out, segment, seg + " header", "magic", 0, 4, random);
        field(out, segment, seg + " header", "format version", 4, 4, random);
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
                field(out, segment, "batch header", b + " " + headerNames[f], offset + headerOffsets[f], widths[f], random);
            }
            field(out, segment, "batch header", b + " compression", offset + compressionAt, 1, random);
            field(out, segment, "batch header", b + " stored body length", offset + compressionAt + 1, 8, random);
            field(out, segment, "batch header", b + " raw body length", offset + compressionAt + 9, 8, random);
            Set<Integer> sampled = new TreeSet<>(List.of(0, 1, groups / 2, groups - 1, random.nextInt(groups), random.nextInt(groups)));
            DataInputDeserializer footer = new DataInputDeserializer();
            for (int kg : sampled) {
                long entry = footerStart + kg * 16L;
                field(out, segment, "batch footer", b + " key group #" + kg + " offset", entry, 8, random);
                field(out, segment, "batch footer", b + " key group #" + kg + " length", entry + 8, 4, random);
                field(out, segment, "batch footer", b + " key group #" + kg + " CRC", entry + 12, 4, random);
                footer.setBuffer(bytes, (int) entry, 12);
                long kgOffset = footer.readLong();
                int kgLength = footer.readInt();
                if (kgLength > 4) {
                    field(out, segment, "LZ4 block", b + " key group #" + kg + " raw length", offset + kgOffset, 4, random);
                }
            }
            field(out, segment, "batch footer", b + " header length", batchEnd - 12, 4, random);
            field(out, segment, "batch footer", b + " CRC", batchEnd - 8, 4, random);
            field(out, segment, "batch footer", b + " magic", batchEnd - 4, 4, random);
            out.add(truncation(segment, seg, b + " start", offset, true));
            out.add(truncation(segment, seg, b + " first byte", offset + 1, false));
            out.add(truncation(segment, seg, b + " header end", offset + headerLength, false));
            out.add(truncation(segment, seg, b + " footer start", footerStart, false));
            out.add(truncation(segment, seg, b + " inside the footer", footerStart + footerBytes / 2, false));
            out.add(truncation(segment, seg, b + " last byte", batchEnd - 1, false));
            offset = batchEnd;
        }
        for (int i = 0; i < RANDOM_FLIPS; i++) {
            long at = (long) (random.nextDouble() * bytes.length);
            out.add(flip(segment, "segment: random bit flip", "anywhere", at, bytes, random));
        }
        return batches;
    }

    /** Every byte of the manifest flipped, its lengths and counts set, truncations at its fields. */
    private static void manifestMutations(Path manifest, Random random, List<Mutation> out) throws Exception {
        byte[] bytes = Files.readAllBytes(manifest);
        for (int at = 0; at < bytes.length; at++) {
            out.add(flip(manifest, "manifest: a bit flipped in every byte", "byte " + at, at, bytes, random));
        }
        for (int i = 0; i < RANDOM_FLIPS / 5; i++) {
            out.add(flip(manifest, "manifest: random bit flip", "anywhere", random.nextInt(bytes.length), bytes, random));
        }
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
        fields.add(new long[] {in.getPosition(), 4});
        names.add("CRC32C");
        assertThat(in.getPosition() + 4).as("the manifest ends with its CRC32C").isEqualTo(bytes.length);
        for (int f = 0; f < fields.size(); f++) {
            long[] field = fields.get(f);
            field(out, manifest, "manifest", names.get(f), field[0], (int) field[1], random);
            out.add(truncation(manifest, "manifest", "at " + names.get(f), field[0], false));
        }
    }

    /** Sets the {@code width}-byte field at {@code offset} to 0, -1, 2^31-1 (and the longest long), and flips a bit. */
    private static void field(List<Mutation> out, Path file, String part, String name, long offset, int width, Random random) throws Exception {
        byte[] bytes = Files.readAllBytes(file);
        List<Long> values = new ArrayList<>(List.of(0L, -1L));
        if (width >= 4) {
            values.add((long) INT_MAX);
        }
        if (width == 8) {
            values.add(Long.MAX_VALUE);
        }
        for (long value : values) {
            byte[] encoded = new byte[width];
            for (int i = 0; i < width; i++) {
                encoded[i] = (byte) (value >>> (8 * (width - 1 - i)));
            }
            String shown = value == Long.MAX_VALUE ? "2^63-1" : value == INT_MAX ? "2^31-1" : Long.toString(value);
            out.add(new Mutation(file, part + " field set to " + shown, name, offset, encoded, false));
        }
        out.add(flip(file, part + " field: a bit flipped", name, offset + random.nextInt(width), bytes, random));
    }

    private static Mutation flip(Path file, String kind, String where, long at, byte[] bytes, Random random) {
        byte flipped = (byte) (bytes[(int) at] ^ (1 << random.nextInt(8)));
        return new Mutation(file, kind, where, at, new byte[] {flipped}, false);
    }

    private static Mutation truncation(Path file, String part, String where, long length, boolean atBatchBoundary) {
        return new Mutation(file, part + " truncated at a boundary", where, length, null, atBatchBoundary);
    }

    private static boolean unchanged(byte[] original, Mutation m) {
        for (int i = 0; i < m.bytes.length; i++) {
            if (original[(int) m.offset + i] != m.bytes[i]) {
                return false;
            }
        }
        return true;
    }

    private static void apply(Mutation m, byte[] original) throws Exception {
        try (RandomAccessFile file = new RandomAccessFile(m.file.toFile(), "rw")) {
            if (m.bytes == null) {
                file.setLength(m.offset);
            } else {
                file.seek(m.offset);
                file.write(m.bytes);
            }
        }
    }

    /** A case's work: null if it passed as intact, else what it reported. */
    @FunctionalInterface
    private interface Case {
        String run() throws Exception;
    }

    /**
     * Runs {@code c} under the per-case timeout: its result, or "VIOLATION ..." for an {@link
     * Error}, an unchecked exception or a hang.
     */
    private static String runCase(ExecutorService runner, Case c) throws Exception {
        Future<String> result = runner.submit(() -> {
            try {
                return c.run();
            } catch (Throwable t) {
                return "VIOLATION " + FaultHarness.messages(t);
            }
        });
        try {
            return result.get(CASE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            result.cancel(true);
            throw new AssertionError("a case ran longer than " + CASE_TIMEOUT_SECONDS + " s (seed " + SEED + ")");
        }
    }

    /**
     * Restores the latest checkpoint from the damaged files: null if it restored exactly, the
     * error if that names the damaged file and an offset, else "VIOLATION ...".
     */
    private static String restore(AppendLogStateBackend backend, String checkpointDir, Completed latest, Mutation m) {
        try (FaultHarness restored = FaultHarness.restore(backend, checkpointDir, latest)) {
            Map<Integer, Long> contents = restored.contents();
            if (!contents.equals(latest.state)) {
                return "VIOLATION wrong state restored: " + contents.size() + " entries, expected " + latest.state.size();
            }
            return null;
        } catch (Throwable t) {
            String unchecked = uncheckedIn(t);
            if (unchecked != null) {
                return "VIOLATION " + unchecked + " in " + FaultHarness.messages(t);
            }
            CorruptLogException corrupt = corruptIn(t);
            String messages = FaultHarness.messages(t);
            String file = m.file.getFileName().toString();
            if (corrupt != null && corrupt.getMessage().contains(file) && corrupt.getMessage().matches("(?s).* at offset \\d+.*")) {
                return corrupt.getMessage().substring(corrupt.getMessage().indexOf(file));
            }
            if (messages.contains(file) && messages.contains("magic at offset 0")) {
                // A manifest without its magic reads as another backend's checkpoint.
                return messages.substring(messages.indexOf(file));
            }
            return "VIOLATION the error names neither " + file + " nor an offset: " + messages;
        }
    }

    /** The first {@link Error} or unchecked exception among {@code t}, its causes and suppressed. */
    private static String uncheckedIn(Throwable t) {
        for (Throwable c : chain(t)) {
            if (c instanceof Error || c instanceof RuntimeException) {
                return c.getClass().getName() + ": " + c.getMessage();
            }
        }
        return null;
    }

    private static CorruptLogException corruptIn(Throwable t) {
        for (Throwable c : chain(t)) {
            if (c instanceof CorruptLogException) {
                return (CorruptLogException) c;
            }
        }
        return null;
    }

    private static List<Throwable> chain(Throwable t) {
        List<Throwable> all = new ArrayList<>();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        collect(t, all, seen);
        return all;
    }

    private static void collect(Throwable t, List<Throwable> all, Set<Throwable> seen) {
        if (t == null || !seen.add(t)) {
            return;
        }
        all.add(t);
        collect(t.getCause(), all, seen);
        for (Throwable s : t.getSuppressed()) {
            collect(s, all, seen);
        }
    }

    /**
     * Runs {@code LogTool verify} on the damaged segment: null if it found nothing (allowed only
     * for a truncation that leaves whole batches), the problems it printed if each names the
     * file and an offset, else "VIOLATION ...".
     */
    private static String verify(Mutation m) throws Exception {
        ByteArrayOutputStream printed = new ByteArrayOutputStream();
        int problems = new LogTool(new PrintStream(printed, true, StandardCharsets.UTF_8))
                .run(false, new org.apache.flink.core.fs.Path(m.file.toUri()));
        String output = printed.toString(StandardCharsets.UTF_8);
        String file = m.file.getFileName().toString();
        for (String line : output.split("\n")) {
            if (line.startsWith("PROBLEM") && !(line.contains(file) && line.matches(".* at offset \\d+.*"))) {
                return "VIOLATION verify printed: " + line;
            }
        }
        if (problems == 0) {
            return m.atBatchBoundary ? null : "VIOLATION verify found nothing wrong";
        }
        return output;
    }
}
