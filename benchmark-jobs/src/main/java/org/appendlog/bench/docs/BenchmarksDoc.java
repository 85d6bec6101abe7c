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

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Rewrites the generated tables of a Markdown page from the files the harness wrote, so that no
 * figure of the page is typed in.
 *
 * <p>A generated table is a block
 *
 * <pre>
 * &lt;!-- table: benchmarks/full-profile/results.md | where job=topk | columns backend; records/s --&gt;
 * ...
 * &lt;!-- end --&gt;
 * </pre>
 *
 * whose body is replaced by a table of the named file, relative to the page: the n-th Markdown
 * table of a {@code .md} file (the first without {@code #n}), or a {@code .csv} file with its
 * header row. {@code where} keeps the rows whose cells equal ({@code =}) or differ from ({@code
 * !=}) the given values; {@code columns} keeps the named columns in that order. Cells are copied
 * verbatim.
 *
 * <p>Self-contained (JDK only), so that {@code java
 * benchmark-jobs/src/main/java/org/appendlog/bench/docs/BenchmarksDoc.java docs/benchmarks.md}
 * runs it without a build; {@code --check} exits with 1 instead of rewriting a page that is out
 * of date.
 */
public final class BenchmarksDoc {

    private static final Pattern BLOCK =
            Pattern.compile("(<!-- table: ([^\n]+?) -->\n)(.*?)(<!-- end -->)", Pattern.DOTALL);

    private BenchmarksDoc() {}

    public static void main(String[] args) throws IOException {
        boolean check = args.length > 0 && args[0].equals("--check");
        int pageArg = check ? 1 : 0;
        Path page = Path.of(args.length > pageArg ? args[pageArg] : "docs/benchmarks.md");
        String before = Files.readString(page);
        String after = regenerate(before, page.toAbsolutePath().getParent());
        if (after.equals(before)) {
            System.out.println(page + ": tables up to date");
        } else if (check) {
            System.err.println(page + ": tables differ from the files they are read from");
            System.exit(1);
        } else {
            Files.writeString(page, after);
            System.out.println(page + ": tables rewritten");
        }
    }

    /** The page with the body of every table block read anew from the files under {@code dir}. */
    static String regenerate(String page, Path dir) throws IOException {
        Matcher block = BLOCK.matcher(page);
        StringBuilder out = new StringBuilder();
        while (block.find()) {
            String table = Selection.parse(block.group(2)).render(dir);
            block.appendReplacement(
                    out, Matcher.quoteReplacement(block.group(1) + table + block.group(4)));
        }
        block.appendTail(out);
        return out.toString();
    }

    /** What a block's marker asks for: a file, which table of it, which rows and columns. */
    private static final class Selection {
        private final String file;
        private final int tableNumber;
        private final Map<String, String> equal = new LinkedHashMap<>();
        private final Map<String, String> different = new LinkedHashMap<>();
        private final List<String> columns = new ArrayList<>();

        private Selection(String file, int tableNumber) {
            this.file = file;
            this.tableNumber = tableNumber;
        }

        static Selection parse(String marker) {
            String[] parts = marker.split("\\s+\\|\\s+");
            String[] fileAndNumber = parts[0].trim().split("#", 2);
            Selection selection =
                    new Selection(
                            fileAndNumber[0],
                            fileAndNumber.length == 2 ? Integer.parseInt(fileAndNumber[1]) : 1);
            for (int i = 1; i < parts.length; i++) {
                String part = parts[i].trim();
                if (part.startsWith("where ")) {
                    for (String condition : items(part.substring("where ".length()))) {
                        String[] columnAndValue = condition.split("!?=", 2);
                        if (columnAndValue.length != 2) {
                            throw new IllegalArgumentException(
                                    "Table marker '" + marker + "': expected column=value or"
                                            + " column!=value, got '" + condition + "'");
                        }
                        (condition.contains("!=") ? selection.different : selection.equal)
                                .put(columnAndValue[0].trim(), columnAndValue[1].trim());
                    }
                } else if (part.startsWith("columns ")) {
                    selection.columns.addAll(items(part.substring("columns ".length())));
                } else {
                    throw new IllegalArgumentException(
                            "Table marker '" + marker + "': unknown part '" + part
                                    + "' (expected 'where ...' or 'columns ...')");
                }
            }
            return selection;
        }

        private static List<String> items(String list) {
            List<String> items = new ArrayList<>();
            for (String item : list.split(";")) {
                items.add(item.trim());
            }
            return items;
        }

        String render(Path dir) throws IOException {
            Path path = dir.resolve(file);
            List<List<String>> table =
                    file.endsWith(".csv") ? csv(path) : markdownTable(path, tableNumber);
            List<String> header = table.get(0);
            List<Integer> kept = new ArrayList<>();
            for (String column : columns.isEmpty() ? header : columns) {
                kept.add(column(header, column, path));
            }
            Map<Integer, String> equalCells = cellConditions(equal, header, path);
            Map<Integer, String> differentCells = cellConditions(different, header, path);

            StringBuilder out = new StringBuilder();
            row(out, header, kept);
            row(out, table.get(1), kept);
            for (List<String> cells : table.subList(2, table.size())) {
                if (equalCells.entrySet().stream()
                                .allMatch(c -> cells.get(c.getKey()).equals(c.getValue()))
                        && differentCells.entrySet().stream()
                                .noneMatch(c -> cells.get(c.getKey()).equals(c.getValue()))) {
                    row(out, cells, kept);
                }
            }
            return out.toString();
        }

        private static Map<Integer, String> cellConditions(
                Map<String, String> conditions, List<String> header, Path path) {
            Map<Integer, String> byIndex = new LinkedHashMap<>();
            conditions.forEach((column, value) -> byIndex.put(column(header, column, path), value));
            return byIndex;
        }

        private static int column(List<String> header, String column, Path path) {
            int index = header.indexOf(column);
            if (index < 0) {
                throw new IllegalArgumentException(
                        "No column '" + column + "' in " + path + "; its columns: " + header);
            }
            return index;
        }

        private static void row(StringBuilder out, List<String> cells, List<Integer> kept) {
            out.append('|');
            for (int index : kept) {
                out.append(' ').append(cells.get(index)).append(" |");
            }
            out.append('\n');
        }

        /** Header, alignment row and rows of the n-th table (1-based) of a Markdown file. */
        private static List<List<String>> markdownTable(Path path, int number) throws IOException {
            int seen = 0;
            boolean inTable = false;
            List<List<String>> table = new ArrayList<>();
            for (String line : Files.readAllLines(path)) {
                boolean tableLine = line.startsWith("|");
                if (tableLine && !inTable) {
                    seen++;
                }
                inTable = tableLine;
                if (tableLine && seen == number) {
                    table.add(cells(line));
                }
            }
            if (table.isEmpty()) {
                throw new IllegalArgumentException(
                        path + " has " + seen + " Markdown tables, not " + number);
            }
            return table;
        }

        private static List<String> cells(String line) {
            String inner = line.substring(1, line.endsWith("|") ? line.length() - 1 : line.length());
            List<String> cells = new ArrayList<>();
            for (String cell : inner.split("\\|", -1)) {
                cells.add(cell.trim());
            }
            return cells;
        }

        /** A CSV file as a table: its header, a plain alignment row, its rows. */
        private static List<List<String>> csv(Path path) throws IOException {
            List<List<String>> table = new ArrayList<>();
            for (String line : Files.readAllLines(path)) {
                if (!line.isBlank()) {
                    table.add(List.of(line.split(",", -1)));
                }
            }
            if (table.isEmpty()) {
                throw new IllegalArgumentException(path + " is empty");
            }
            List<String> alignment = new ArrayList<>();
            table.get(0).forEach(column -> alignment.add("---"));
            table.add(1, alignment);
            return table;
        }
    }
}
