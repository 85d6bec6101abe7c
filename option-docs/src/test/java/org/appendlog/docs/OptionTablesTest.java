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

package org.appendlog.docs;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.description.HtmlFormatter;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/** The option tables of the READMEs and docs say what the option definitions say. */
class OptionTablesTest {

    /** Surefire runs in the module's directory. */
    private static final OptionTables REPOSITORY = new OptionTables(Paths.get("..").toAbsolutePath().normalize());

    @Test
    void everyTableIsCurrent() throws Exception {
        assertThat(REPOSITORY.staleTables()).isEmpty();
    }

    @Test
    void everyOptionClassHasATable() throws Exception {
        assertThat(REPOSITORY.documentedClasses())
                .containsAll(
                        OptionTables.OPTION_CLASSES.stream().map(Class::getName).collect(Collectors.toList()));
    }

    @Test
    void everyOptionIsDescribed() {
        for (Class<?> options : OptionTables.OPTION_CLASSES) {
            for (ConfigOption<?> option : new OptionTable(options).options()) {
                assertThat(new HtmlFormatter().format(option.description())).as(option.key()).isNotBlank();
            }
        }
    }

    @Test
    void aTableThatDiffersIsReportedAndRewritten(@TempDir Path root) throws Exception {
        Path readme = root.resolve("module/README.md");
        Files.createDirectories(readme.getParent());
        String marker = "<!-- options: " + OptionTables.OPTION_CLASSES.get(0).getName() + " -->\n";
        Files.write(
                readme,
                ("# Options\n\n" + marker + "| key | default |\n| `a.removed.option` | `1` |\n<!-- end -->\nafter\n")
                        .getBytes(StandardCharsets.UTF_8));
        OptionTables tables = new OptionTables(root);

        assertThat(tables.staleTables())
                .singleElement()
                .asString()
                .contains("module/README.md", OptionTables.OPTION_CLASSES.get(0).getName(), OptionTables.REGENERATE);

        OptionTables.main(new String[] {root.toString()});
        String rewritten = new String(Files.readAllBytes(readme), StandardCharsets.UTF_8);
        assertThat(rewritten)
                .startsWith("# Options\n\n" + marker + "| key | default | type | description |")
                .contains("`state.backend.appendlog.segment-size` | `64 mb` | MemorySize |")
                .doesNotContain("a.removed.option")
                .endsWith("<!-- end -->\nafter\n");
        assertThat(tables.staleTables()).isEmpty();
    }
}
