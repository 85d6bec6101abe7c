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

package org.appendlog.bench.harness;

import java.io.File;
import java.io.IOException;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Writes a harness run's results: {@code results.csv} (one row per configuration and round, raw
 * numbers), {@code checkpoints.csv} (each completed checkpoint's figures), {@code bandwidth.csv},
 * {@code recovery.csv} (each recovery sample by sample), {@code
 * results.md} (the same as tables, with the profile and the command) and four PNG charts.
 */
final class ResultFiles {

    static final String CSV = "results.csv";
    static final String CHECKPOINTS_CSV = "checkpoints.csv";
    static final String BANDWIDTH_CSV = "bandwidth.csv";
    static final String RECOVERY_CSV = "recovery.csv";
    static final String MARKDOWN = "results.md";
    static final String[] CHARTS = {
        "throughput.png", "checkpoint-duration.png", "checkpoint-bytes.png", "recovery.png"
    };

    static final String HEAP_BREAKDOWN_TITLE =
            "The heap column by component (class histogram after a full collection, the index and"
                    + " change buffer from the backend's gauges; the rest of the primitive arrays"
                    + " includes the bytes of the key strings):";

    private ResultFiles() {}

    static void write(
            File dir, String description, String command, List<RunResult> results, Map<String, Double> bandwidth)
            throws IOException {
        if (!dir.mkdirs() && !dir.isDirectory()) {
            throw new IOException("Cannot create the results folder " + dir.getAbsolutePath());
        }
        writeCsv(new File(dir, CSV), results);
        writeCheckpointsCsv(new File(dir, CHECKPOINTS_CSV), results);
        writeBandwidthCsv(new File(dir, BANDWIDTH_CSV), bandwidth);
        writeRecoveryCsv(new File(dir, RECOVERY_CSV), results);
        writeMarkdown(new File(dir, MARKDOWN), description, command, results, bandwidth);
        writeCharts(dir, results);
    }

    private static void writeCsv(File file, List<RunResult> results) throws IOException {
        try (PrintWriter out = new PrintWriter(file, StandardCharsets.UTF_8)) {
            out.println(
                    "job,backend,storage,status,verified,records_processed,throughput_records_per_s,"
                            + "cpu_us_per_record,task_cpu_us_per_record,checkpoints_completed,checkpoints_failed,checkpoint_p50_ms,checkpoint_p99_ms,"
                            + "sync_p50_ms,sync_p99_ms,start_delay_p99_ms,incremental_bytes_per_checkpoint,full_bytes_per_checkpoint,"
                            + "incremental_bytes_total,storage_bytes_written,storage_bytes_in_use,heap_bytes,"
                            + "recovery_first_record_ms,recovery_full_throughput_ms,round");
            for (RunResult r : results) {
                CheckpointFigures c = r.checkpoints;
                out.println(
                        String.join(
                                ",",
                                runColumns(r),
                                quote(r.status),
                                Boolean.toString(r.verified),
                                Long.toString(r.recordsProcessed),
                                String.format(Locale.ROOT, "%.0f", r.throughput),
                                csvMicros(r.cpuMicrosPerRecord),
                                csvMicros(r.taskCpuMicrosPerRecord),
                                Integer.toString(c.completed),
                                Integer.toString(c.failed),
                                Long.toString(c.durationP50Ms),
                                Long.toString(c.durationP99Ms),
                                Long.toString(c.syncP50Ms),
                                Long.toString(c.syncP99Ms),
                                Long.toString(c.startDelayP99Ms),
                                Long.toString(c.incrementalBytesAvg),
                                Long.toString(c.fullBytesAvg),
                                Long.toString(c.incrementalBytesTotal),
                                Long.toString(r.storageBytesWritten),
                                Long.toString(r.storageBytesInUse),
                                Long.toString(r.heapBytes),
                                Long.toString(r.recoveryFirstRecordMs),
                                Long.toString(r.recoveryFullThroughputMs),
                                Integer.toString(r.round)));
            }
        }
    }

    private static String csvMicros(double micros) {
        return micros < 0 ? "-1" : String.format(Locale.ROOT, "%.3f", micros);
    }

    private static void writeBandwidthCsv(File file, Map<String, Double> bandwidth) throws IOException {
        try (PrintWriter out = new PrintWriter(file, StandardCharsets.UTF_8)) {
            out.println("storage,sequential_write_mb_per_s");
            for (Map.Entry<String, Double> e : bandwidth.entrySet()) {
                out.println(e.getKey() + "," + String.format(Locale.ROOT, "%.1f", e.getValue()));
            }
        }
    }

    /** Each completed checkpoint, to tell which ones make the percentiles and where their time went. */
    private static void writeCheckpointsCsv(File file, List<RunResult> results) throws IOException {
        try (PrintWriter out = new PrintWriter(file, StandardCharsets.UTF_8)) {
            out.println("job,backend,storage,round," + CheckpointSample.CSV_COLUMNS);
            for (RunResult r : results) {
                for (CheckpointSample checkpoint : r.checkpoints.samples) {
                    out.println(String.join(",", runColumns(r), Integer.toString(r.round), checkpoint.csv()));
                }
            }
        }
    }

    /** Each injected failure's recovery, sample by sample, to read what the two figures summarize. */
    private static void writeRecoveryCsv(File file, List<RunResult> results) throws IOException {
        try (PrintWriter out = new PrintWriter(file, StandardCharsets.UTF_8)) {
            out.println("job,backend,storage,round,ms_since_failure,records_since_failure");
            for (RunResult r : results) {
                for (long[] sample : r.recoveryCurve) {
                    out.println(
                            String.join(
                                    ",",
                                    runColumns(r),
                                    Integer.toString(r.round),
                                    Long.toString(sample[0]),
                                    Long.toString(sample[1])));
                }
            }
        }
    }

    /** The columns that name a run's configuration: job, backend, storage. */
    private static String runColumns(RunResult r) {
        return String.join(",", r.job, quote(r.backend), r.storage);
    }

    private static String quote(String text) {
        return text.contains(",") || text.contains("\"") ? '"' + text.replace("\"", "\"\"") + '"' : text;
    }

    private static void writeMarkdown(
            File file, String description, String command, List<RunResult> results, Map<String, Double> bandwidth)
            throws IOException {
        try (PrintWriter out = new PrintWriter(file, StandardCharsets.UTF_8)) {
            out.println("# Benchmark results");
            out.println();
            out.println("Command: `" + command + "`");
            out.println();
            out.println(description + ".");
            out.println();
            out.println(table(results));
            out.print(RoundsTable.table(results));
            String breakdown = HeapBreakdown.table(results);
            if (!breakdown.isEmpty()) {
                out.println(HEAP_BREAKDOWN_TITLE);
                out.println();
                out.println(breakdown);
            }
            if (!bandwidth.isEmpty()) {
                out.println("Raw sequential write bandwidth of the storages (the limit for any checkpoint): local and"
                        + " hdfs one file written and synced, hbase one checkpoint stream of the HBase storage"
                        + " written until HBase acknowledged it:");
                out.println();
                out.println("| storage | MB/s |");
                out.println("|---|---:|");
                for (Map.Entry<String, Double> e : bandwidth.entrySet()) {
                    out.println(String.format(Locale.ROOT, "| %s | %.0f |", e.getKey(), e.getValue()));
                }
                out.println();
            }
            List<String> notes = new ArrayList<>();
            for (RunResult r : results) {
                if (!r.ran() || !r.verified) {
                    notes.add("- " + runLabel(r, results) + ": " + (r.ran() ? r.verification : r.status));
                }
            }
            if (!notes.isEmpty()) {
                out.println("Configurations without a verified result:");
                out.println();
                notes.forEach(out::println);
                out.println();
            }
            List<String> failures = new ArrayList<>();
            for (RunResult r : results) {
                r.checkpoints.failures.forEach(f -> failures.add("- " + runLabel(r, results) + ", " + f));
            }
            if (!failures.isEmpty()) {
                out.println("Failed checkpoints of the measured runs, with Flink's reason:");
                out.println();
                failures.forEach(out::println);
                out.println();
            }
            for (String chart : CHARTS) {
                out.println("![" + chart + "](" + chart + ")");
                out.println();
            }
        }
    }

    /** The results as a Markdown table, with a last column for the round when there were several. */
    static String table(List<RunResult> results) {
        boolean repeated = RoundsTable.repeated(results);
        StringBuilder t = new StringBuilder();
        t.append("| job | backend | storage | verified | records/s | CPU µs / record | task CPU µs / record "
                        + "| checkpoints | ckpt p50 ms | ckpt p99 ms ")
                .append("| sync p50 ms | sync p99 ms | start delay p99 ms | incremental / ckpt | full / ckpt | written to storage ")
                .append("| on storage (steady) | heap | recovery: first record ms | recovery: full throughput ms |")
                .append(repeated ? " round |\n" : "\n");
        t.append("|---|---|---|---|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|")
                .append(repeated ? "---:|\n" : "\n");
        for (RunResult r : results) {
            CheckpointFigures c = r.checkpoints;
            t.append(String.format(
                    Locale.ROOT,
                    "| %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s | %s |%s\n",
                    r.job,
                    r.backend,
                    r.storage,
                    r.ran() ? (r.verified ? "yes" : "**NO**") : r.status.startsWith("unavailable") ? "not run" : "**failed**",
                    Format.count(r.throughput),
                    Format.micros(r.cpuMicrosPerRecord),
                    Format.micros(r.taskCpuMicrosPerRecord),
                    r.ran() ? c.completed + (c.failed > 0 ? " (+" + c.failed + " failed)" : "") : "-",
                    Format.millis(c.durationP50Ms),
                    Format.millis(c.durationP99Ms),
                    Format.millis(c.syncP50Ms),
                    Format.millis(c.syncP99Ms),
                    Format.millis(c.startDelayP99Ms),
                    Format.bytes(c.incrementalBytesAvg),
                    Format.bytes(c.fullBytesAvg),
                    Format.bytes(r.storageBytesWritten),
                    Format.bytes(r.storageBytesInUse),
                    Format.bytes(r.heapBytes),
                    Format.millis(r.recoveryFirstRecordMs),
                    Format.millis(r.recoveryFullThroughputMs),
                    repeated ? " " + r.round + " |" : ""));
        }
        return t.toString();
    }

    /** The configuration, and the round when there were several (the charts have a bar per run). */
    private static String runLabel(RunResult r, List<RunResult> results) {
        return RoundsTable.repeated(results) ? r.label() + " #" + r.round : r.label();
    }

    private static void writeCharts(File dir, List<RunResult> results) throws IOException {
        BarChart throughput = new BarChart("Throughput (records/s, higher is better)", Format::count, "records/s");
        BarChart duration = new BarChart(
                "Checkpoint duration (ms, lower is better)", v -> Format.millis((long) v), "p50", "p99", "sync p99");
        BarChart bytes = new BarChart(
                "Bytes per checkpoint (lower is better)", v -> Format.bytes((long) v), "incremental (uploaded)", "full (state size)");
        BarChart recovery = new BarChart(
                "Recovery after an injected failure (ms, lower is better)", v -> Format.millis((long) v),
                "to first record", "to full throughput");
        for (RunResult r : results) {
            if (!r.ran()) {
                continue;
            }
            String label = runLabel(r, results);
            throughput.add(label, r.throughput);
            if (r.checkpoints.completed > 0) {
                CheckpointFigures c = r.checkpoints;
                duration.add(label, c.durationP50Ms, c.durationP99Ms, c.syncP99Ms);
                bytes.add(label, c.incrementalBytesAvg, c.fullBytesAvg);
                recovery.add(label, r.recoveryFirstRecordMs, r.recoveryFullThroughputMs);
            }
        }
        throughput.write(new File(dir, CHARTS[0]));
        duration.write(new File(dir, CHARTS[1]));
        bytes.write(new File(dir, CHARTS[2]));
        recovery.write(new File(dir, CHARTS[3]));
    }
}
