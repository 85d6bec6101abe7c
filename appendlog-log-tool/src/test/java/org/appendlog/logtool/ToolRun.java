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

package org.appendlog.logtool;

import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.JsonNode;
import org.apache.flink.shaded.jackson2.com.fasterxml.jackson.databind.ObjectMapper;

import java.io.ByteArrayOutputStream;
import java.io.IOException;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;

/** One run of {@code appendlog-log} (in this JVM or as a process): its exit code and what it printed. */
final class ToolRun {

    final int exit;
    final String out;
    final String err;

    ToolRun(int exit, String out, String err) {
        this.exit = exit;
        this.out = out;
        this.err = err;
    }

    /** Runs the command in this JVM. */
    static ToolRun of(String... args) {
        ByteArrayOutputStream out = new ByteArrayOutputStream();
        ByteArrayOutputStream err = new ByteArrayOutputStream();
        int exit =
                LogToolCommand.execute(
                        new PrintStream(out, true, StandardCharsets.UTF_8),
                        new PrintStream(err, true, StandardCharsets.UTF_8),
                        args);
        return new ToolRun(exit, out.toString(StandardCharsets.UTF_8), err.toString(StandardCharsets.UTF_8));
    }

    /** The exit code and the first line that explains it, for {@code ReliabilityLog}. */
    String outcome() {
        String first =
                (err.isEmpty() ? out : err).lines()
                        .filter(line -> !line.isBlank())
                        .findFirst()
                        .orElse("");
        return "exit " + exit + ": " + first;
    }

    JsonNode json() throws IOException {
        return new ObjectMapper().readTree(out);
    }

    @Override
    public String toString() {
        return "exit " + exit + "\nstdout:\n" + out + "\nstderr:\n" + err;
    }
}
