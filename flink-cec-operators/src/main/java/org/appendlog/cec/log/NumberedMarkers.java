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

package org.appendlog.cec.log;

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Optional;

/**
 * Small marker files of a subtask directory, {@code <prefix><n>}, numbered in the order they are
 * written; the highest number is the current one. A marker is written under a temporary name and
 * renamed to a name no file has yet, so a reader never sees a torn marker and no file system has
 * to rename over an existing file (HDFS does not).
 */
final class NumberedMarkers {

    private NumberedMarkers() {}

    /** Writes the next marker with {@code prefix}; of the earlier ones, the newest {@code keep - 1} stay. */
    static void writeNext(FileSystem fs, Path directory, String prefix, int keep, Content content)
            throws IOException {
        List<Path> earlier = list(fs, directory, prefix);
        long number =
                earlier.isEmpty() ? 1 : Math.addExact(numberOf(earlier.get(earlier.size() - 1), prefix), 1);
        String name = String.format("%s%020d", prefix, number);
        Path tmp = new Path(directory, "." + name + ".inprogress");
        try (FSDataOutputStream raw = fs.create(tmp, FileSystem.WriteMode.OVERWRITE);
                DataOutputStream out = new DataOutputStream(raw)) {
            content.write(out);
            out.flush();
            raw.sync();
        }
        Path target = new Path(directory, name);
        if (!fs.rename(tmp, target)) {
            throw new IOException("Could not rename CEC marker " + tmp + " to " + target);
        }
        for (int i = 0; i < earlier.size() - (keep - 1); i++) {
            fs.delete(earlier.get(i), false);
        }
    }

    /**
     * The newest marker with {@code prefix}, decoded, if there is one. Read again if the marker
     * listed as the newest is deleted before it is opened: newer ones were written meanwhile.
     */
    static <T> Optional<T> readLatest(FileSystem fs, Path directory, String prefix, Decoder<T> decoder)
            throws IOException {
        return DirectoryReads.retried(
                directory,
                () -> {
                    List<Path> markers = list(fs, directory, prefix);
                    if (markers.isEmpty()) {
                        return Optional.empty();
                    }
                    try (DataInputStream in = new DataInputStream(fs.open(markers.get(markers.size() - 1)))) {
                        return Optional.of(decoder.read(in));
                    }
                });
    }

    /** The markers with {@code prefix} in {@code directory}, oldest first. */
    static List<Path> list(FileSystem fs, Path directory, String prefix) throws IOException {
        List<Path> markers = new ArrayList<>();
        for (FileStatus child : DirectoryReads.list(fs, directory).orElse(Collections.emptyList())) {
            if (child.getPath().getName().startsWith(prefix)) {
                markers.add(child.getPath());
            }
        }
        markers.sort((a, b) -> a.getName().compareTo(b.getName()));
        return markers;
    }

    private static long numberOf(Path marker, String prefix) throws IOException {
        try {
            return Long.parseLong(marker.getName().substring(prefix.length()));
        } catch (NumberFormatException e) {
            throw new IOException("Not a CEC marker file: " + marker, e);
        }
    }

    /** Writes a marker's content. */
    @FunctionalInterface
    interface Content {
        void write(DataOutputStream out) throws IOException;
    }

    /** Reads a marker's content. */
    @FunctionalInterface
    interface Decoder<T> {
        T read(DataInputStream in) throws IOException;
    }
}
