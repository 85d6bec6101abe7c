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

import org.appendlog.statebackend.faults.ReliabilityLog;

import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.ServerName;
import org.apache.hadoop.hbase.StartMiniClusterOption;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Admin;
import org.apache.hadoop.hbase.client.RegionInfo;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.File;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;
import java.util.concurrent.TimeUnit;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The HBase plugin's {@code -flink-lib} jar, whose HBase client is relocated, writing, reading back and
 * discarding checkpoint streams ({@link CheckpointStreamLoop}, in a JVM with Flink's distribution, the Hadoop
 * client and that jar) while the region of its table moves back and forth between the two region servers of an
 * HBase mini cluster. A region server answers requests for a region it no longer holds with exceptions that the
 * client loads by their class names ({@code RegionMovedException}, {@code NotServingRegionException},
 * {@code RegionOpeningException}) to find the region again and retry; every stream must survive the moves.
 *
 * <p>Also with Flink's HBase SQL connector jar (the stand-in of {@code hbase-sql-connector-stand-in}, built as
 * Flink builds it) in the same class loader, before or after the plugin's jar, while that jar's own relocated
 * client puts and gets rows in a table of its own whose region moves too: one class loader loads one copy of
 * each class both jars keep under HBase's name, and neither client may fail on the other's copy.
 */
class RelocatedClientRegionMoveITCase {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("hbase-region-moves");
    private static final String TABLE = "moving_checkpoints";
    private static final String CONNECTOR_TABLE = "moving_connector_rows";
    private static final int LOOP_SECONDS = 15;
    private static final Duration MOVE_INTERVAL = Duration.ofMillis(1000);

    private static HBaseTestingUtility hbase;

    @BeforeAll
    static void startHBase() throws Exception {
        hbase = new HBaseTestingUtility();
        hbase.getConfiguration().setInt("hbase.master.info.port", -1);
        hbase.getConfiguration().setInt("hbase.regionserver.info.port", -1);
        hbase.getConfiguration().setInt("hbase.regionserver.handler.count", 10);
        hbase.startMiniCluster(StartMiniClusterOption.builder().numRegionServers(2).build());
    }

    @AfterAll
    static void stopHBase() throws Exception {
        if (hbase != null) {
            hbase.shutdownMiniCluster();
        }
    }

    /** Which jars the JVM's classpath has after Flink's distribution and the Hadoop client, in order. */
    enum Jars {
        PLUGIN_ONLY("the plugin's jar alone"),
        PLUGIN_THEN_CONNECTOR("the plugin's jar, then Flink's HBase SQL connector jar"),
        CONNECTOR_THEN_PLUGIN("Flink's HBase SQL connector jar, then the plugin's jar");

        final String description;

        Jars(String description) {
            this.description = description;
        }

        List<String> classpath() throws IOException {
            String plugin = PluginJars.flinkLib("flink-hbase-checkpoint").toString();
            String connector = PluginJars.hbaseSqlConnectorStandIn().toString();
            switch (this) {
                case PLUGIN_ONLY:
                    return List.of(plugin);
                case PLUGIN_THEN_CONNECTOR:
                    return List.of(plugin, connector);
                default:
                    return List.of(connector, plugin);
            }
        }

        boolean withConnector() {
            return this != PLUGIN_ONLY;
        }
    }

    @ParameterizedTest(name = "{0}")
    @EnumSource(Jars.class)
    void streamsSurviveRegionMovesBetweenRegionServers(Jars jars) throws Exception {
        Path work = Paths.get(System.getProperty("e2e.work.dir")).toAbsolutePath().resolve("region-moves");
        Path output = work.resolve("loop-" + jars.name().toLowerCase(Locale.ROOT) + ".out");
        Process loop = startLoop(work, jars, output);
        int moves = 0;
        int rounds = 0;
        try {
            waitForReady(loop, output);
            List<TableName> tables = new ArrayList<>(List.of(TableName.valueOf(TABLE)));
            if (jars.withConnector()) {
                tables.add(TableName.valueOf(CONNECTOR_TABLE));
            }
            try (Admin admin = hbase.getConnection().getAdmin()) {
                while (loop.isAlive()) {
                    for (TableName table : tables) {
                        for (RegionInfo region : admin.getRegions(table)) {
                            admin.move(region.getEncodedNameAsBytes(), otherServer(table, region));
                            moves++;
                        }
                    }
                    rounds++;
                    Thread.sleep(MOVE_INTERVAL.toMillis());
                }
            }
            assertThat(loop.waitFor(2, TimeUnit.MINUTES)).as("the stream loop finished").isTrue();
        } finally {
            loop.descendants().forEach(ProcessHandle::destroyForcibly);
            loop.destroyForcibly();
        }

        String text = Files.readString(output, StandardCharsets.UTF_8);
        List<String> failures =
                text.lines()
                        .filter(line -> line.startsWith("stream of checkpoint ") || line.startsWith("put of the connector's"))
                        .collect(Collectors.toList());
        String summary = summary(text, "streams ");
        String connectorSummary = summary(text, "connector puts ");
        RELIABILITY.record(
                "with " + jars.description + ", the tables' regions moved to the other of 2 region servers, again and"
                        + " again for " + LOOP_SECONDS + " s, while 200 KB streams are written, read back and discarded"
                        + (jars.withConnector() ? " and the connector's client puts and gets rows" : ""),
                (failures.isEmpty() && loop.exitValue() == 0
                                ? "every stream read back equal and gone after its discard"
                                        + (jars.withConnector() ? ", every row of the connector's client read back" : "")
                                : "first failure: " + (failures.isEmpty() ? "exit code " + loop.exitValue() : failures.get(0)))
                        + " (" + summary + (jars.withConnector() ? ", " + connectorSummary : "") + ", " + moves + " moves)");

        // A move takes about 1.5 s here: 15 s make 4 to 6 rounds of moves of every table.
        assertThat(rounds).as("rounds of region moves (%s moves) while the streams were written", moves)
                .isGreaterThanOrEqualTo(3);
        assertThat(failures).as("failed streams and puts, output in %s", output).isEmpty();
        assertThat(loop.exitValue()).as("exit code of the stream loop, output:\n%s", text).isZero();
        assertThat(summary).matches("streams [1-9][0-9]* failed 0");
        if (jars.withConnector()) {
            assertThat(connectorSummary).matches("connector puts [1-9][0-9]* failed 0");
        }
    }

    private static String summary(String output, String prefix) {
        return output.lines().filter(line -> line.startsWith(prefix)).findFirst().orElse("no '" + prefix + "' summary");
    }

    /** The stream loop in a JVM with Flink's distribution, the Hadoop client and {@code jars}. */
    private static Process startLoop(Path work, Jars jars, Path output) throws Exception {
        List<String> classpath = new ArrayList<>();
        classpath.add(DeployClasspath.of("flink", work));
        classpath.add(DeployClasspath.of("hadoop", work));
        classpath.addAll(jars.classpath());
        classpath.add(
                Paths.get(CheckpointStreamLoop.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                        .toString());
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx512m");
        command.addAll(Arrays.asList(System.getProperty("e2e.java.opens").trim().split("\\s+")));
        command.addAll(List.of("-cp", String.join(File.pathSeparator, classpath), CheckpointStreamLoop.class.getName()));
        command.addAll(List.of(
                "localhost:" + hbase.getZkCluster().getClientPort(), TABLE, Integer.toString(LOOP_SECONDS)));
        if (jars.withConnector()) {
            command.add(CONNECTOR_TABLE);
        }
        return new ProcessBuilder(command).redirectErrorStream(true).redirectOutput(output.toFile()).start();
    }

    private static void waitForReady(Process loop, Path output) throws Exception {
        long deadline = System.nanoTime() + Duration.ofMinutes(2).toNanos();
        while (!Files.readString(output, StandardCharsets.UTF_8).lines().anyMatch("ready"::equals)) {
            if (!loop.isAlive() || System.nanoTime() > deadline) {
                throw new AssertionError(
                        "The stream loop did not create its table; output:\n" + Files.readString(output));
            }
            Thread.sleep(200);
        }
    }

    /** The region server that does not hold {@code region}. */
    private static ServerName otherServer(TableName table, RegionInfo region) throws IOException {
        ServerName holder = hbase.getMiniHBaseCluster().getServerHoldingRegion(table, region.getRegionName());
        return hbase.getMiniHBaseCluster().getRegionServerThreads().stream()
                .map(t -> t.getRegionServer().getServerName())
                .filter(server -> !server.equals(holder))
                .findFirst()
                .orElseThrow();
    }
}
