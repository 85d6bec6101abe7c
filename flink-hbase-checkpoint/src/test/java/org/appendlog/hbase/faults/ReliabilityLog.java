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

package org.appendlog.hbase.faults;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * Rows (suite, case, outcome) appended to {@code target/reliability/<suite>.csv}, in the format
 * that flink-statebackend-appendlog's {@code ReliabilityReport} turns into docs/reliability.md
 * (the modules share no test code, so this writer is the HBase module's own).
 */
public final class ReliabilityLog {

    private final String suite;
    private final Path file;

    private ReliabilityLog(String suite) {
        this.suite = suite;
        Path dir = Paths.get("target", "reliability");
        this.file = dir.resolve(suite + ".csv");
        try {
            Files.createDirectories(dir);
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    public static ReliabilityLog of(String suite) {
        return new ReliabilityLog(suite);
    }

    public synchronized void record(String testCase, String outcome) {
        String clean =
                outcome.replaceAll("(127\\.0\\.0\\.1|localhost):\\d+", "$1:<port>")
                        .replaceAll("[0-9a-f]{32}", "<job>")
                        .replaceAll("run-[0-9a-f]{16}", "<run>")
                        .replaceAll("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>");
        if (clean.length() > 700) {
            clean = clean.substring(0, 700) + " ...";
        }
        String line = quote(suite) + "," + quote(testCase) + "," + quote(clean) + "\n";
        try {
            Files.write(file, line.getBytes(StandardCharsets.UTF_8), StandardOpenOption.CREATE, StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String quote(String s) {
        return '"' + s.replace("\r", " ").replace("\n", " ").replace("\"", "\"\"") + '"';
    }
}
