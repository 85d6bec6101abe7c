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

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Writes {@code docs/reliability.md} from the rows that the fault and input tests recorded in
 * {@code target/reliability/*.csv} of each module (see {@link ReliabilityLog}). Run after the
 * tests:
 *
 * <pre>
 * java -cp flink-statebackend-appendlog/target/test-classes \
 *     org.appendlog.statebackend.faults.ReliabilityReport docs/reliability.md \
 *     flink-statebackend-appendlog/target/reliability flink-hbase-checkpoint/target/reliability \
 *     flink-cec-operators/target/reliability appendlog-log-tool/target/reliability \
 *     end-to-end-tests/target/reliability
 * </pre>
 */
public final class ReliabilityReport {

    /** Sections in this order; a suite not listed here comes last under its own name. */
    private static final Map<String, String> TITLES = new LinkedHashMap<>();

    static {
        TITLES.put("checkpoint-faults", "Append-log backend: the writer killed at each step of checkpoint 3 (`CheckpointFaultTest`)");
        TITLES.put("compaction-faults", "Append-log backend: compaction killed at each step (`CompactionFaultTest`)");
        TITLES.put("damaged-log", "Append-log backend: a log of 10 checkpoints damaged on disk (`DamagedLogTest`)");
        TITLES.put("damaged-manifest", "Append-log backend: a damaged checkpoint manifest (`DamagedManifestTest`)");
        TITLES.put("fuzzed-log", "Append-log backend: segments and a manifest mutated thousands of ways, by kind of mutation (`FuzzedLogTest`)");
        TITLES.put("streamed-batch-damage", "Append-log backend: a streamed batch (full batch, native savepoint) damaged on disk (`DamagedStreamedBatchTest`)");
        TITLES.put("hdfs-datanode", "Append-log backend on HDFS: the DataNode restarted during checkpoint 3 (`DataNodeRestartTest`)");
        TITLES.put("hdfs-kerberos", "Append-log backend on HDFS with Kerberos: a principal without rights on the log directory, rights withdrawn from a running backend (`SecureHdfsJobTest`)");
        TITLES.put("hdfs-lease-in-task", "Append-log backend on HDFS: a restore on a task thread after the DataNode restarted (`LeaseRecoveryInTaskTest`)");
        TITLES.put("crash-orphans", "Append-log backend: files that crashed attempts left (`CrashOrphansTest`)");
        TITLES.put("object-store", "Append-log backend on S3 (s3proxy, Flink's S3 plugin): checkpoints, compaction and a TaskManager killed (`ObjectStoreTest`)");
        TITLES.put("appendlog-input", "Append-log backend: bad input (`InputValidationTest`)");
        TITLES.put("cec-log-retention", "CEC operators: log retention killed in the middle of its deletions (`LogRetentionTest`)");
        TITLES.put("cec-log-retention-job", "CEC operators: a job that fails while retention deletes its log, and a read from before the earliest kept record (`CecLogRetentionTest`)");
        TITLES.put("cec-log-cleaner", "CEC operators: a retention deletion that hangs, and a job cancelled meanwhile (`CecLogCleanerTest`)");
        TITLES.put("cec-log-following", "CEC operators: a live reader while the writing job fails (`CecLogFollowingTest`)");
        TITLES.put("cec-eventual-recovery", "CEC operators: jobs failed in eventual and open-only mode, and savepoints restored in another mode (`CecEventualModeTest`)");
        TITLES.put("cec-rescale", "CEC operators: restores at another parallelism, 2 -> 3 -> 1, and the old checkpoint again (`CecRescaleTest`)");
        TITLES.put("cec-fuzzed-log", "CEC operators: stream segments and time indexes mutated thousands of ways, by kind of mutation (`FuzzedSegmentsTest`)");
        TITLES.put("hbase-faults", "HBase storage: cluster faults during a checkpoint, lost rows, cells above the client's limit (`HBaseFaultsITCase`)");
        TITLES.put("hbase-job-id", "HBase storage: a new run under the job id of a run with a retained checkpoint (`HBaseCheckpointStorageJobITCase`)");
        TITLES.put("log-tool-input", "Log tool (`appendlog-log`): a damaged log, bad arguments, a missing path, an unreachable NameNode (`LogToolCommandTest`)");
        TITLES.put("log-tool-hdfs", "Log tool (`appendlog-log`) on HDFS: a good and a damaged log (`LogToolCommandOnHdfsTest`)");
        TITLES.put("hbase-region-moves", "HBase storage: the `-flink-lib` jar's relocated client, alone and next to Flink's HBase SQL connector jar, while the tables' regions move between region servers (`RelocatedClientRegionMoveITCase`)");
        TITLES.put("hbase-input", "HBase storage: bad options (`HBaseInputValidationTest`)");
        TITLES.put("hbase-security", "HBase storage on a Kerberos-secured HBase with access control: a job logged in through Flink, a principal without rights (`SecuredHBaseCheckpointStorageITCase`)");
        TITLES.put("hbase-delegation-tokens", "HBase storage with delegation tokens of 10 s: a user with tokens only, tokens replaced by Flink's token manager, a relogin (`HBaseCheckpointTokenITCase`)");
    }

    private ReliabilityReport() {}

    public static void main(String[] args) throws IOException {
        if (args.length < 2) {
            System.err.println("usage: ReliabilityReport <output.md> <reliability dir>...");
            System.exit(2);
        }
        Map<String, List<String[]>> suites = new LinkedHashMap<>();
        for (int i = 1; i < args.length; i++) {
            try (Stream<Path> files = Files.list(Paths.get(args[i]))) {
                for (Path file : files.filter(f -> f.toString().endsWith(".csv")).sorted().collect(Collectors.toList())) {
                    for (String line : Files.readAllLines(file, StandardCharsets.UTF_8)) {
                        String[] row = parse(line);
                        suites.computeIfAbsent(row[0], s -> new ArrayList<>()).add(row);
                    }
                }
            }
        }
        List<String> order = new ArrayList<>();
        TITLES.keySet().stream().filter(suites::containsKey).forEach(order::add);
        suites.keySet().stream().filter(s -> !TITLES.containsKey(s)).sorted().forEach(order::add);

        StringBuilder md = new StringBuilder();
        md.append("# Reliability: faults and bad input tried, and what happened\n\n");
        md.append("Generated by `org.appendlog.statebackend.faults.ReliabilityReport` from the rows the fault\n")
                .append("and input tests recorded while they ran; do not edit by hand. To regenerate, run\n")
                .append("`./mvnw -B verify`, then the command in that class's comment.\n\n");
        md.append("The rule every row is checked against (the tests fail otherwise): a completed checkpoint\n")
                .append("restores with exactly its state, or the restore fails with an error naming the broken\n")
                .append("file and offset (or the missing path, or the HBase row/pointer); never a wrong state.\n")
                .append("Bad input fails at once with an error naming the option or state to fix.\n\n");
        int total = 0;
        for (String suite : order) {
            total += suites.get(suite).size();
        }
        md.append(total).append(" cases in ").append(order.size()).append(" groups.\n");
        for (String suite : order) {
            List<String[]> rows = suites.get(suite);
            md.append("\n## ").append(TITLES.getOrDefault(suite, suite)).append(" (").append(rows.size()).append(")\n\n");
            md.append("| fault or input | what happened |\n|---|---|\n");
            for (String[] row : rows) {
                md.append("| ").append(cell(row[1])).append(" | ").append(cell(row[2])).append(" |\n");
            }
        }
        Files.write(Paths.get(args[0]), md.toString().getBytes(StandardCharsets.UTF_8));
        System.out.println("Wrote " + total + " cases to " + args[0]);
    }

    private static String cell(String s) {
        return s.replace("|", "\\|");
    }

    /** One line of three quoted, comma-separated fields ("" inside a field is a quote). */
    static String[] parse(String line) {
        List<String> fields = new ArrayList<>();
        StringBuilder field = new StringBuilder();
        boolean quoted = false;
        for (int i = 0; i < line.length(); i++) {
            char c = line.charAt(i);
            if (quoted) {
                if (c == '"' && i + 1 < line.length() && line.charAt(i + 1) == '"') {
                    field.append('"');
                    i++;
                } else if (c == '"') {
                    quoted = false;
                } else {
                    field.append(c);
                }
            } else if (c == '"') {
                quoted = true;
            } else if (c == ',') {
                fields.add(field.toString());
                field.setLength(0);
            } else {
                field.append(c);
            }
        }
        fields.add(field.toString());
        if (fields.size() != 3) {
            throw new IllegalArgumentException("Not a reliability row (suite, case, outcome): " + line);
        }
        return fields.toArray(new String[0]);
    }
}
