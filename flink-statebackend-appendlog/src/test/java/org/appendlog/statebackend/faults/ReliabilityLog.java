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
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * Rows (suite, case, outcome) of what a fault or bad input did, appended to {@code
 * target/reliability/<suite>.csv} while the tests run; {@link ReliabilityReport} turns all such
 * files into {@code docs/reliability.md}.
 */
public final class ReliabilityLog {

    public static final Path DIR = Paths.get("target", "reliability");

    private final String suite;
    private final Path file;

    private ReliabilityLog(String suite) {
        this.suite = suite;
        this.file = DIR.resolve(suite + ".csv");
        try {
            Files.createDirectories(DIR);
            Files.deleteIfExists(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** A fresh log for {@code suite} (one per test class, so a rerun replaces its rows). */
    public static ReliabilityLog of(String suite) {
        return new ReliabilityLog(suite);
    }

    public synchronized void record(String testCase, String outcome) {
        String line = quote(suite) + "," + quote(testCase) + "," + quote(outcome) + "\n";
        try {
            Files.write(
                    file,
                    line.getBytes(StandardCharsets.UTF_8),
                    StandardOpenOption.CREATE,
                    StandardOpenOption.APPEND);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    private static String quote(String s) {
        // Temporary directories differ per run; the file name is what the reader needs.
        s = s.replaceAll("(faulty|file|hdfs):/[^\\s,;)']*(/tmp/|localhost:)[^\\s,;)']*/", ".../")
                .replaceAll("[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", "<uuid>")
                .replaceAll("/tmp/junit-?\\d+", "<tmp>")
                .replaceAll("[0-9a-f]{32}", "<job>")
                .replaceAll("(127\\.0\\.0\\.1|localhost):\\d+", "$1:<port>")
                // Hadoop's connection errors name the machine.
                .replaceAll("Call From [^/\\s]+/", "Call From <host>/");
        if (s.length() > 600) {
            s = s.substring(0, 600) + " ...";
        }
        return '"' + s.replace("\r", " ").replace("\n", " ").replace("\"", "\"\"") + '"';
    }
}
