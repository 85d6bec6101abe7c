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

import org.appendlog.statebackend.log.BatchCompression;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.BatchStream;
import org.appendlog.statebackend.log.RecordFormat;

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.KeyGroupRange;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;

/**
 * A segment as the backend writes it, on any Flink file system: checkpoint 1 with {@link #KEYS}
 * keys of state "counts", then checkpoint 2 rewriting the first {@link #REWRITTEN} of them.
 */
final class TwoCheckpointSegment {

    static final int KEYS = 500;
    static final int REWRITTEN = 50;
    static final String NAME = "kg-0-127-c1-000001.seg";

    /** Where each batch starts, in the order written. */
    final List<BatchLocation> batches = new ArrayList<>();
    final Path file;

    TwoCheckpointSegment(Path dir) throws IOException {
        file = new Path(dir, NAME);
        try (FSDataOutputStream out = file.getFileSystem().create(file, FileSystem.WriteMode.NO_OVERWRITE)) {
            out.write(BatchFormat.segmentHeader());
            long position = BatchFormat.SEGMENT_HEADER_BYTES;
            for (int checkpoint = 1; checkpoint <= 2; checkpoint++) {
                BatchStream batch =
                        new BatchStream(
                                out, NAME, position, checkpoint, KeyGroupRange.of(0, 127),
                                List.of("counts"), BatchCompression.values()[checkpoint - 1], 256);
                int keys = checkpoint == 1 ? KEYS : REWRITTEN;
                for (int kg = 0; kg < 128; kg++) {
                    for (int key = kg; key < keys; key += 128) {
                        byte[] k = ("key " + key).getBytes(StandardCharsets.UTF_8);
                        byte[] value = ("value " + key + " of checkpoint " + checkpoint).getBytes(StandardCharsets.UTF_8);
                        RecordFormat.write(batch, kg, checkpoint, 0, k, 0, k.length, value, 0, value.length);
                    }
                }
                BatchLocation location = batch.finish();
                batches.add(location);
                position += location.length();
            }
        }
    }

    /** Overwrites the file with one byte at {@code offset} inverted. */
    void flipByteAt(long offset) throws IOException {
        FileSystem fs = file.getFileSystem();
        byte[] bytes = new byte[(int) fs.getFileStatus(file).getLen()];
        try (var in = fs.open(file)) {
            int read = 0;
            while (read < bytes.length) {
                read += in.read(bytes, read, bytes.length - read);
            }
        }
        bytes[(int) offset] ^= (byte) 0xFF;
        try (FSDataOutputStream out = fs.create(file, FileSystem.WriteMode.OVERWRITE)) {
            out.write(bytes);
        }
    }
}
