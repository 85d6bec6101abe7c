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

package org.appendlog.e2e.job;

import org.apache.flink.streaming.api.functions.sink.RichSinkFunction;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.nio.file.StandardOpenOption;

/**
 * Appends every record as a line to {@code <dir>/report-<subtask>.txt} on the task manager's local disk
 * (the end-to-end test runs all processes on one machine). At-least-once: a line written after the last
 * checkpoint may be written again after a restore, which is why the job reports only events whose
 * repetition is harmless (a word reaching its final count) or is itself the failure (an overcount).
 */
final class AppendLinesSink extends RichSinkFunction<String> {

    private final String dir;

    AppendLinesSink(String dir) {
        this.dir = dir;
    }

    @Override
    public void invoke(String line, Context context) throws IOException {
        Path file =
                Paths.get(dir, "report-" + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask() + ".txt");
        Files.createDirectories(file.getParent());
        // Written and closed per record: the lines are few, and a killed process must leave them on disk.
        Files.write(
                file,
                (line + "\n").getBytes(StandardCharsets.UTF_8),
                StandardOpenOption.CREATE,
                StandardOpenOption.APPEND);
    }
}
