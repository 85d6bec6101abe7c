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

package org.appendlog.cec.bench;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Locale;

/** A table printed as Markdown: a title line, then the header and the rows in aligned columns. */
final class MarkdownTable {

    private final String title;
    private final List<String[]> rows = new ArrayList<>();

    MarkdownTable(String title, String... header) {
        this.title = title;
        rows.add(header);
    }

    MarkdownTable row(Object... cells) {
        rows.add(Arrays.stream(cells).map(String::valueOf).toArray(String[]::new));
        System.out.println("  " + String.join(" | ", rows.get(rows.size() - 1))); // progress, as each row is measured
        return this;
    }

    void print() {
        int[] width = new int[rows.get(0).length];
        for (String[] row : rows) {
            for (int i = 0; i < row.length; i++) {
                width[i] = Math.max(width[i], row[i].length());
            }
        }
        StringBuilder out = new StringBuilder(String.format("%n%s%n%n", title));
        for (int r = 0; r < rows.size(); r++) {
            StringBuilder line = new StringBuilder("|");
            for (int i = 0; i < rows.get(r).length; i++) {
                line.append(' ').append(String.format(i == 0 ? "%-" + width[i] + "s" : "%" + width[i] + "s", rows.get(r)[i]))
                        .append(" |");
            }
            out.append(line).append('\n');
            if (r == 0) {
                StringBuilder rule = new StringBuilder("|");
                for (int w : width) {
                    rule.append("-".repeat(w + 2)).append('|');
                }
                out.append(rule).append('\n');
            }
        }
        System.out.print(out);
    }

    static String count(double value) {
        return String.format(Locale.ROOT, "%,.0f", value);
    }

    static String ratio(double value) {
        return String.format(Locale.ROOT, "%.2f", value);
    }
}
