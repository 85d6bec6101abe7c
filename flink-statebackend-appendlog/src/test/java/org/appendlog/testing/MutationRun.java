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

package org.appendlog.testing;

import org.appendlog.statebackend.faults.ReliabilityLog;

import java.io.IOException;
import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.Future;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * A seeded fuzz run over files: collects mutations (a field set to 0, -1, 2^31-1 or the longest
 * long, a bit flipped, a truncation), then applies each to a pristine copy of its file in turn,
 * runs the checks on it with a timeout, and tallies the outcomes per kind of mutation. A check
 * returns its outcome; anything else ends in a violation: an {@link Error} or an unchecked
 * exception anywhere in the failure's causes, an error that does not name the damaged file and
 * an offset, a hang, or what the check rejects itself ({@link Violation}). The seed is printed,
 * and the system property {@code appendlog.fuzz.seed} overrides it.
 */
public final class MutationRun {

    private static final Pattern AT_OFFSET = Pattern.compile(" at offset \\d+");
    private static final int CASE_TIMEOUT_SECONDS = 20;
    /** Violations after which the run stops: the first ones tell what is wrong. */
    private static final int ENOUGH_VIOLATIONS = 20;

    /** One way to damage one file. */
    public static final class Mutation {
        public final Path file;
        /** What kind of damage, as the summary counts it. */
        public final String kind;
        public final String where;
        public final long offset;
        /** Written at {@link #offset}; null for a truncation to {@link #offset} bytes. */
        final byte[] bytes;
        /** A truncation that leaves whole records or batches: a verifier may find nothing. */
        public final boolean leavesWholeUnits;

        Mutation(Path file, String kind, String where, long offset, byte[] bytes, boolean leavesWholeUnits) {
            this.file = file;
            this.kind = kind;
            this.where = where;
            this.offset = offset;
            this.bytes = bytes;
            this.leavesWholeUnits = leavesWholeUnits;
        }

        public boolean isTruncation() {
            return bytes == null;
        }

        @Override
        public String toString() {
            return kind + " at offset " + offset + " of " + file.getFileName() + " (" + where + ")";
        }
    }

    /** A check's verdict that the case went wrong although nothing was thrown. */
    public static final class Violation extends Exception {
        private static final long serialVersionUID = 1L;

        public Violation(String what) {
            super(what);
        }
    }

    /** One check of a damaged file: returns its outcome, as the summary counts it. */
    @FunctionalInterface
    public interface Check {
        String run(Mutation mutation) throws Exception;
    }

    private final String name;
    private final long seed;
    private final Random random;
    private final List<Mutation> mutations = new ArrayList<>();

    public MutationRun(String name) {
        // A damaged length read as 4 GiB must fail the allocation, not pass by luck.
        if (Runtime.getRuntime().maxMemory() >= 4L << 30) {
            throw new IllegalStateException(
                    "Run " + name + " with a heap below 4 GiB (the build's -Xmx2g), not "
                            + (Runtime.getRuntime().maxMemory() >> 20) + " MiB");
        }
        this.name = name;
        this.seed = Long.getLong("appendlog.fuzz.seed", System.nanoTime());
        this.random = new Random(seed);
        System.out.println(name + " seed " + seed + " (-Dappendlog.fuzz.seed=" + seed + " repeats it)");
    }

    public long seed() {
        return seed;
    }

    public Random random() {
        return random;
    }

    /**
     * Sets the big-endian {@code width}-byte field {@code name} at {@code offset} of {@code file}
     * to 0, -1, 2^31-1 (if 4 bytes or more) and 2^63-1 (if 8), and flips one of its bits.
     */
    public void field(Path file, String part, String name, long offset, int width) throws IOException {
        List<Long> values = new ArrayList<>(List.of(0L, -1L));
        if (width >= 4) {
            values.add((long) Integer.MAX_VALUE);
        }
        if (width == 8) {
            values.add(Long.MAX_VALUE);
        }
        for (long value : values) {
            byte[] encoded = new byte[width];
            for (int i = 0; i < width; i++) {
                encoded[i] = (byte) (value >>> (8 * (width - 1 - i)));
            }
            String shown =
                    value == Long.MAX_VALUE ? "2^63-1" : value == Integer.MAX_VALUE ? "2^31-1" : Long.toString(value);
            mutations.add(new Mutation(file, part + " field set to " + shown, name, offset, encoded, false));
        }
        flip(file, part + " field: a bit flipped", name, offset + random.nextInt(width));
    }

    /** Flips one random bit of the byte at {@code offset}. */
    public void flip(Path file, String kind, String where, long offset) throws IOException {
        byte original;
        try (RandomAccessFile f = new RandomAccessFile(file.toFile(), "r")) {
            f.seek(offset);
            original = f.readByte();
        }
        byte[] flipped = {(byte) (original ^ (1 << random.nextInt(8)))};
        mutations.add(new Mutation(file, kind, where, offset, flipped, false));
    }

    /** {@code count} bits flipped at random places of {@code file}. */
    public void randomFlips(Path file, String kind, int count) throws IOException {
        long size = Files.size(file);
        for (int i = 0; i < count; i++) {
            flip(file, kind, "anywhere", (long) (random.nextDouble() * size));
        }
    }

    public void truncation(Path file, String part, String where, long length, boolean leavesWholeUnits) {
        mutations.add(new Mutation(file, part + " truncated at a boundary", where, length, null, leavesWholeUnits));
    }

    /**
     * Runs {@code checks} on every mutation, each on a file otherwise as it is now; records a
     * summary row per kind of mutation in {@code reliability}; returns the violations.
     */
    public List<String> run(ReliabilityLog reliability, List<Check> checks) throws Exception {
        Map<Path, byte[]> pristine = new LinkedHashMap<>();
        for (Mutation m : mutations) {
            if (!pristine.containsKey(m.file)) {
                pristine.put(m.file, Files.readAllBytes(m.file));
            }
        }
        Map<String, Map<String, Integer>> outcomes = new LinkedHashMap<>();
        Map<String, String> examples = new LinkedHashMap<>();
        List<String> violations = new ArrayList<>();
        int cases = 0;
        long start = System.nanoTime();
        ExecutorService runner =
                Executors.newSingleThreadExecutor(
                        r -> {
                            Thread t = new Thread(r, name + " case");
                            t.setDaemon(true);
                            return t;
                        });
        try {
            for (Mutation m : mutations) {
                byte[] original = pristine.get(m.file);
                if (!m.isTruncation() && unchanged(original, m)) {
                    continue;
                }
                apply(m);
                cases++;
                Map<String, Integer> tally = outcomes.computeIfAbsent(m.kind, k -> new LinkedHashMap<>());
                tally.merge("cases", 1, Integer::sum);
                for (Check check : checks) {
                    String outcome = runCase(runner, check, m);
                    if (outcome.startsWith("VIOLATION ")) {
                        violations.add(m + ": " + outcome.substring(10));
                    } else {
                        int colon = outcome.indexOf(": ");
                        String label = colon < 0 ? outcome : outcome.substring(0, colon);
                        tally.merge(label, 1, Integer::sum);
                        if (colon >= 0) {
                            examples.putIfAbsent(m.kind, outcome.substring(colon + 2));
                        }
                    }
                }
                Files.write(m.file, original);
                if (violations.size() >= ENOUGH_VIOLATIONS) {
                    break;
                }
            }
        } finally {
            runner.shutdownNow();
            for (Map.Entry<Path, byte[]> file : pristine.entrySet()) {
                Files.write(file.getKey(), file.getValue());
            }
        }
        System.out.printf(
                "%s seed %d: %d cases on %d files in %d ms, %d violations%n",
                name, seed, cases, pristine.size(), (System.nanoTime() - start) / 1_000_000, violations.size());
        for (Map.Entry<String, Map<String, Integer>> kind : outcomes.entrySet()) {
            StringBuilder summary = new StringBuilder();
            kind.getValue().forEach((label, n) -> summary.append(summary.length() == 0 ? "" : ", ").append(n).append(' ').append(label));
            System.out.printf("  %-48s %s%n", kind.getKey(), summary);
            String example = examples.get(kind.getKey());
            reliability.record(kind.getKey(), summary + (example == null ? "" : "; e.g. " + example));
        }
        reliability.record(
                "all cases (seed " + seed + ")",
                cases + " cases, " + violations.size()
                        + " ending in an Error, another unchecked exception, an error naming no file and offset, a wrong value or a hang");
        return violations;
    }

    private static boolean unchanged(byte[] original, Mutation m) {
        for (int i = 0; i < m.bytes.length; i++) {
            if (original[(int) m.offset + i] != m.bytes[i]) {
                return false;
            }
        }
        return true;
    }

    private static void apply(Mutation m) throws IOException {
        try (RandomAccessFile file = new RandomAccessFile(m.file.toFile(), "rw")) {
            if (m.isTruncation()) {
                file.setLength(m.offset);
            } else {
                file.seek(m.offset);
                file.write(m.bytes);
            }
        }
    }

    private String runCase(ExecutorService runner, Check check, Mutation m) throws Exception {
        Future<String> result =
                runner.submit(
                        () -> {
                            try {
                                return check.run(m);
                            } catch (Violation v) {
                                return "VIOLATION " + v.getMessage();
                            } catch (Throwable t) {
                                return "VIOLATION " + describe(t);
                            }
                        });
        try {
            return result.get(CASE_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        } catch (TimeoutException e) {
            result.cancel(true);
            throw new AssertionError(m + " ran longer than " + CASE_TIMEOUT_SECONDS + " s (seed " + seed + ")");
        }
    }

    /**
     * The part of {@code failure}'s messages from the damaged file's name on, if one of them
     * names the file of {@code m} and an offset and none of the causes is unchecked; else a
     * {@link Violation}.
     */
    public static String namesFileAndOffset(Throwable failure, Mutation m) throws Violation {
        String file = m.file.getFileName().toString();
        String named = null;
        for (Throwable t : causes(failure)) {
            if (t instanceof Error || t instanceof RuntimeException) {
                throw new Violation(t.getClass().getName() + ": " + t.getMessage() + " in " + describe(failure));
            }
            String message = t.getMessage();
            if (named == null && message != null && message.contains(file) && AT_OFFSET.matcher(message).find()) {
                named = message.substring(message.indexOf(file));
            }
        }
        if (named == null) {
            throw new Violation("the error names no offset of " + file + ": " + describe(failure));
        }
        return named;
    }

    /** The class and message of {@code t} and of each of its {@link #causes}. */
    private static String describe(Throwable t) {
        return causes(t).stream()
                .map(c -> c.getClass().getSimpleName() + ": " + c.getMessage())
                .collect(Collectors.joining(" <- "));
    }

    /** {@code t}, its causes and what they suppressed. */
    private static List<Throwable> causes(Throwable t) {
        List<Throwable> all = new ArrayList<>();
        Set<Throwable> seen = Collections.newSetFromMap(new IdentityHashMap<>());
        List<Throwable> todo = new ArrayList<>(List.of(t));
        while (!todo.isEmpty()) {
            Throwable next = todo.remove(todo.size() - 1);
            if (next == null || !seen.add(next)) {
                continue;
            }
            all.add(next);
            todo.add(next.getCause());
            todo.addAll(List.of(next.getSuppressed()));
        }
        return all;
    }
}
