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
import org.junit.jupiter.api.Test;

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
 */
class RelocatedClientRegionMoveITCase {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("hbase-region-moves");
    private static final String TABLE = "moving_checkpoints";
    private static final int LOOP_SECONDS = 30;
    private static final Duration MOVE_INTERVAL = Duration.ofMillis(1500);

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

    @Test
    void streamsSurviveRegionMovesBetweenRegionServers() throws Exception {
        Path work = Paths.get(System.getProperty("e2e.work.dir")).toAbsolutePath().resolve("region-moves");
        Process loop = startLoop(work);
        Path output = work.resolve("loop.out");
        int moves = 0;
        try {
            waitForReady(loop, output);
            TableName table = TableName.valueOf(TABLE);
            try (Admin admin = hbase.getConnection().getAdmin()) {
                while (loop.isAlive()) {
                    for (RegionInfo region : admin.getRegions(table)) {
                        ServerName to = otherServer(table, region);
                        admin.move(region.getEncodedNameAsBytes(), to);
                        moves++;
                    }
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
                text.lines().filter(line -> line.startsWith("stream of checkpoint ")).collect(Collectors.toList());
        String summary = text.lines().filter(line -> line.startsWith("streams ")).findFirst().orElse("no summary");
        RELIABILITY.record(
                "the table's region moved to the other of 2 region servers, again and again for "
                        + LOOP_SECONDS + " s, while 200 KB streams are written, read back and discarded",
                (failures.isEmpty() && loop.exitValue() == 0 ? "every stream read back equal and gone after its discard"
                                : "first failure: " + (failures.isEmpty() ? "exit code " + loop.exitValue() : failures.get(0)))
                        + " (" + summary + ", " + moves + " moves)");

        assertThat(moves).as("region moves while the streams were written").isGreaterThanOrEqualTo(5);
        assertThat(failures).as("failed streams, output in %s", output).isEmpty();
        assertThat(loop.exitValue()).as("exit code of the stream loop, output:\n%s", text).isZero();
        assertThat(summary).matches("streams [1-9][0-9]* failed 0");
    }

    /** The stream loop in a JVM with Flink's distribution, the Hadoop client and the plugin's -flink-lib jar. */
    private static Process startLoop(Path work) throws Exception {
        List<String> classpath =
                List.of(
                        DeployClasspath.of("flink", work),
                        DeployClasspath.of("hadoop", work),
                        PluginJars.flinkLib("flink-hbase-checkpoint").toString(),
                        Paths.get(CheckpointStreamLoop.class.getProtectionDomain().getCodeSource().getLocation().toURI())
                                .toString());
        List<String> command = new ArrayList<>();
        command.add(Paths.get(System.getProperty("java.home"), "bin", "java").toString());
        command.add("-Xmx512m");
        command.addAll(Arrays.asList(System.getProperty("e2e.java.opens").trim().split("\\s+")));
        command.addAll(List.of("-cp", String.join(File.pathSeparator, classpath), CheckpointStreamLoop.class.getName()));
        command.addAll(List.of(
                "localhost:" + hbase.getZkCluster().getClientPort(), TABLE, Integer.toString(LOOP_SECONDS)));
        return new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(work.resolve("loop.out").toFile())
                .start();
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
