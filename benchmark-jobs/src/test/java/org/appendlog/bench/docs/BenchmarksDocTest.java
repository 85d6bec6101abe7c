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

package org.appendlog.bench.docs;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class BenchmarksDocTest {

    private static final String RESULTS =
            "# Benchmark results\n\n"
                    + "| job | backend | records/s |\n"
                    + "|---|---|---:|\n"
                    + "| wordcount | hashmap | 800.0 k |\n"
                    + "| topk | hashmap | 1.20 M |\n"
                    + "| topk | appendlog | 1.00 M |\n\n"
                    + "Rounds:\n\n"
                    + "| job | backend | median |\n"
                    + "|---|---|---:|\n"
                    + "| wordcount | appendlog | 0.91x |\n";

    @TempDir Path dir;

    @ParameterizedTest
    @ValueSource(strings = {"../docs/benchmarks.md", "../docs/sizing.md"})
    void aCommittedPageIsWhatItsFilesGenerate(String path) throws Exception {
        Path page = Path.of(path);
        String committed = Files.readString(page);

        assertThat(committed).contains("<!-- table: ");
        assertThat(BenchmarksDoc.regenerate(committed, page.getParent())).isEqualTo(committed);
    }

    @Test
    void regeneratingAnUnchangedPageIsANoOp() throws Exception {
        Files.writeString(dir.resolve("results.md"), RESULTS);
        String page = "# Page\n\n<!-- table: results.md#2 -->\nstale\n<!-- end -->\n\ntext\n";

        String once = BenchmarksDoc.regenerate(page, dir);

        assertThat(once)
                .isEqualTo(
                        "# Page\n\n<!-- table: results.md#2 -->\n"
                                + "| job | backend | median |\n"
                                + "| --- | --- | ---: |\n"
                                + "| wordcount | appendlog | 0.91x |\n"
                                + "<!-- end -->\n\ntext\n");
        assertThat(BenchmarksDoc.regenerate(once, dir)).isEqualTo(once);
    }

    @Test
    void aChangedCsvChangesTheTable() throws Exception {
        Path csv = dir.resolve("sweep.csv");
        Files.writeString(csv, "configuration,restore_ms\nmin-dirty-ratio 0.5,33\n");
        String page = BenchmarksDoc.regenerate("<!-- table: sweep.csv -->\n<!-- end -->\n", dir);
        assertThat(page).contains("| min-dirty-ratio 0.5 | 33 |");

        Files.writeString(csv, "configuration,restore_ms\nmin-dirty-ratio 0.5,41\n");
        String regenerated = BenchmarksDoc.regenerate(page, dir);

        assertThat(regenerated)
                .isEqualTo(
                        "<!-- table: sweep.csv -->\n"
                                + "| configuration | restore_ms |\n"
                                + "| --- | --- |\n"
                                + "| min-dirty-ratio 0.5 | 41 |\n"
                                + "<!-- end -->\n");
    }

    @Test
    void keepsTheRowsAndColumnsTheMarkerNames() throws Exception {
        Files.writeString(dir.resolve("results.md"), RESULTS);

        String page =
                BenchmarksDoc.regenerate(
                        "<!-- table: results.md | where job!=wordcount; backend=hashmap | columns records/s; backend -->\n"
                                + "<!-- end -->",
                        dir);

        assertThat(page)
                .isEqualTo(
                        "<!-- table: results.md | where job!=wordcount; backend=hashmap | columns records/s; backend -->\n"
                                + "| records/s | backend |\n"
                                + "| ---: | --- |\n"
                                + "| 1.20 M | hashmap |\n"
                                + "<!-- end -->");
    }

    @Test
    void anUnknownColumnNamesTheFileAndItsColumns() throws Exception {
        Files.writeString(dir.resolve("results.md"), RESULTS);

        assertThatThrownBy(
                        () ->
                                BenchmarksDoc.regenerate(
                                        "<!-- table: results.md | columns heap -->\n<!-- end -->",
                                        dir))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("No column 'heap' in ")
                .hasMessageContaining("results.md")
                .hasMessageContaining("[job, backend, records/s]");
    }

    @Test
    void aMissingTableNamesTheFileAndHowManyItHas() throws Exception {
        Files.writeString(dir.resolve("results.md"), RESULTS);

        assertThatThrownBy(
                        () ->
                                BenchmarksDoc.regenerate(
                                        "<!-- table: results.md#3 -->\n<!-- end -->", dir))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("has 2 Markdown tables, not 3");
    }
}
