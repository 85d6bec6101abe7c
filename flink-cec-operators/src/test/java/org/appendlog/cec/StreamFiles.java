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

package org.appendlog.cec;

import org.appendlog.cec.log.LogWriter;

import org.apache.flink.core.fs.Path;

import java.io.File;
import java.io.IOException;
import java.nio.file.Files;
import java.util.Comparator;
import java.util.List;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/** What a subtask stream's directory on the local disk holds, as the retention tests measure it. */
public final class StreamFiles {

    private StreamFiles() {}

    /** The segment files of a stream directory, oldest first. */
    public static List<String> segments(Path stream) throws IOException {
        try (Stream<java.nio.file.Path> files = Files.list(new File(stream.toUri()).toPath())) {
            return files.map(f -> f.getFileName().toString())
                    .filter(name -> LogWriter.sequenceOf(name) >= 0)
                    .sorted(Comparator.comparingLong(LogWriter::sequenceOf))
                    .collect(Collectors.toList());
        }
    }

    /** The bytes of all files in a stream directory. */
    public static long bytes(Path stream) throws IOException {
        try (Stream<java.nio.file.Path> files = Files.list(new File(stream.toUri()).toPath())) {
            return files.mapToLong(f -> f.toFile().length()).sum();
        }
    }
}
