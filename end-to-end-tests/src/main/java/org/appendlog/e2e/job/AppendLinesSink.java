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
