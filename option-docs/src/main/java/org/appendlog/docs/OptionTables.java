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

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * Rewrites every option table of the repository's Markdown files from the option classes it
 * names, or with {@code --check} only reports the tables that differ. A table is marked by
 *
 * <pre>
 * &lt;!-- options: org.appendlog.statebackend.AppendLogOptions --&gt;
 * | key | default | type | description |
 * ...
 * &lt;!-- end --&gt;
 * </pre>
 *
 * <p>Regenerate after changing an option: {@code ./mvnw -B -q install -DskipTests && ./mvnw -B -q
 * -pl option-docs exec:java}.
 */
public final class OptionTables {

    /** Every class of the product that defines options; each must have a table somewhere. */
    static final List<Class<?>> OPTION_CLASSES =
            List.of(
                    org.appendlog.statebackend.AppendLogOptions.class,
                    org.appendlog.hbase.HBaseCheckpointStorageOptions.class,
                    org.appendlog.cec.api.CecConfigOptions.class);

    static final String REGENERATE =
            "./mvnw -B -q install -DskipTests && ./mvnw -B -q -pl option-docs exec:java";

    private static final Pattern TABLE =
            Pattern.compile("(<!-- options: ([\\w.$]+) -->\\n)(.*?)(<!-- end -->)", Pattern.DOTALL);

    private final Path root;

    OptionTables(Path root) {
        this.root = root;
    }

    public static void main(String[] args) throws IOException {
        boolean check = args.length > 0 && args[0].equals("--check");
        Path root = Paths.get(args.length > (check ? 1 : 0) ? args[check ? 1 : 0] : ".");
        OptionTables tables = new OptionTables(root);
        List<String> stale = tables.staleTables();
        if (check) {
            stale.forEach(System.out::println);
            System.exit(stale.isEmpty() ? 0 : 1);
        }
        for (Path file : tables.markdownFiles()) {
            String text = read(file);
            String current = regenerate(text);
            if (!current.equals(text)) {
                Files.write(file, current.getBytes(StandardCharsets.UTF_8));
                System.out.println("Rewrote the option tables of " + root.relativize(file));
            }
        }
    }

    /** The Markdown files of the repository, build output left out. */
    List<Path> markdownFiles() throws IOException {
        try (Stream<Path> files = Files.walk(root)) {
            return files.filter(f -> f.toString().endsWith(".md"))
                    .filter(f -> !root.relativize(f).toString().matches("(.*/)?(target|\\..*)/.*"))
                    .sorted()
                    .collect(Collectors.toList());
        }
    }

    /** One line per table that differs from its classes' options, naming file and class. */
    List<String> staleTables() throws IOException {
        List<String> stale = new ArrayList<>();
        for (Path file : markdownFiles()) {
            Matcher table = TABLE.matcher(read(file));
            while (table.find()) {
                if (!table.group(3).equals(render(table.group(2)))) {
                    stale.add(
                            root.relativize(file) + ": the table of " + table.group(2)
                                    + " differs from its options; regenerate with " + REGENERATE);
                }
            }
        }
        return stale;
    }

    /** The option classes that have a table in some file. */
    Set<String> documentedClasses() throws IOException {
        Set<String> documented = new TreeSet<>();
        for (Path file : markdownFiles()) {
            Matcher table = TABLE.matcher(read(file));
            while (table.find()) {
                documented.add(table.group(2));
            }
        }
        return documented;
    }

    static String regenerate(String text) {
        Matcher table = TABLE.matcher(text);
        StringBuffer out = new StringBuffer();
        while (table.find()) {
            table.appendReplacement(
                    out, Matcher.quoteReplacement(table.group(1) + render(table.group(2)) + table.group(4)));
        }
        table.appendTail(out);
        return out.toString();
    }

    private static String render(String className) {
        try {
            return new OptionTable(Class.forName(className)).render();
        } catch (ClassNotFoundException e) {
            throw new IllegalArgumentException("No option class " + className, e);
        }
    }

    private static String read(Path file) throws IOException {
        return new String(Files.readAllBytes(file), StandardCharsets.UTF_8);
    }
}
