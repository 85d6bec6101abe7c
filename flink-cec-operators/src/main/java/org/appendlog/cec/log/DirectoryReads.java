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

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.FileNotFoundException;
import java.io.IOException;
import java.util.Arrays;
import java.util.List;
import java.util.Optional;

/**
 * Reads of a directory that a subtask writes at the same time: commit markers are written under
 * a temporary name and renamed, old commit markers and refused owners' markers are deleted.
 * Flink's local file system looks up every name it lists, so a listing fails with a {@link
 * FileNotFoundException} when a name it read is renamed or deleted before the lookup; it
 * returns nothing then, so the vanished entry cannot just be skipped. Such a read is repeated
 * instead. A listing that succeeds holds every entry that existed all the while it ran, so a
 * reader never misses a committed marker: the latest one is only deleted after newer ones exist.
 */
final class DirectoryReads {

    private static final Logger LOG = LoggerFactory.getLogger(DirectoryReads.class);

    /** A read races a writer's rename or delete, a few per checkpoint: it rarely fails twice. */
    private static final int ATTEMPTS = 10;

    private DirectoryReads() {}

    /** The entries of {@code directory}, or empty if it does not exist. */
    static Optional<List<FileStatus>> list(FileSystem fs, Path directory) throws IOException {
        return retried(
                directory,
                () -> {
                    FileStatus[] children;
                    try {
                        children = fs.listStatus(directory);
                    } catch (FileNotFoundException e) {
                        // HDFS reports a missing directory so; the local file system returns null.
                        if (!fs.exists(directory)) {
                            return Optional.empty();
                        }
                        throw e;
                    }
                    return children == null ? Optional.empty() : Optional.of(Arrays.asList(children));
                });
    }

    /** Runs {@code read} of files in {@code directory} again if a file it found vanished meanwhile. */
    static <T> T retried(Path directory, Read<T> read) throws IOException {
        FileNotFoundException vanished = null;
        for (int attempt = 1; attempt <= ATTEMPTS; attempt++) {
            try {
                return read.run();
            } catch (FileNotFoundException e) {
                LOG.debug("A file in {} vanished while it was read, reading again: {}", directory, e.getMessage());
                vanished = e;
            }
        }
        throw new IOException(
                "Files in " + directory + " vanished during each of " + ATTEMPTS + " attempts to read it", vanished);
    }

    /** A read of files in a directory. */
    @FunctionalInterface
    interface Read<T> {
        T run() throws IOException;
    }
}
