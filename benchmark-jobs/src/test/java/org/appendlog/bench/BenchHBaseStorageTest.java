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

package org.appendlog.bench;

import org.appendlog.bench.harness.RunResult;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The harness on the HBase checkpoint storage: one HBase mini cluster started by the harness,
 * WordCount on {@code hashmap} and {@code appendlog} with checkpoints in HBase tables, an injected
 * failure each, plus the checkpointing-off limit and the bandwidth probe through an HBase
 * checkpoint stream.
 */
class BenchHBaseStorageTest {

    @TempDir Path tmp;

    @Test
    void wordCountOnHBaseStorageVerifiesAfterTheFailure() throws Exception {
        File out = tmp.resolve("hbase").toFile();
        SmokeRun run =
                SmokeRun.run(
                        tmp, "--jobs", "wordcount", "--backends", "hashmap,appendlog", "--storages", "hbase",
                        "--bandwidth-mb", "8", "--out", out.getPath());

        // checkpointing off, hashmap, appendlog
        assertThat(run.results).hasSize(3);
        run.assertMeasuredAndVerified();
        RunResult hashmap = run.results.get(1);
        assertThat(hashmap.label()).contains("hashmap").contains("hbase");
        // hashmap keeps no log of its own: every byte seen is a cell of the run's HBase table
        assertThat(hashmap.storageBytesWritten).isGreaterThanOrEqualTo(hashmap.checkpoints.fullBytesAvg);
        assertThat(run.results.get(2).label()).contains("appendlog").contains("hbase");

        List<String> bandwidth = Files.readAllLines(new File(out, "bandwidth.csv").toPath());
        assertThat(bandwidth).hasSize(2);
        assertThat(bandwidth.get(1)).startsWith("hbase,");
        assertThat(Double.parseDouble(bandwidth.get(1).substring("hbase,".length()))).isPositive();
        assertThat(Files.readString(new File(out, "results.md").toPath()))
                .contains("| wordcount | hashmap | hbase | yes |")
                .contains("| wordcount | appendlog | hbase | yes |");
    }
}
