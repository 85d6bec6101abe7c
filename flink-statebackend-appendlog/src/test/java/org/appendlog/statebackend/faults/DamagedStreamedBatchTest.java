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

import org.appendlog.statebackend.log.BatchCompression;
import org.appendlog.statebackend.log.BatchFormat;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.BatchStream;
import org.appendlog.statebackend.log.CorruptLogException;
import org.appendlog.statebackend.log.LogScanner;
import org.appendlog.statebackend.log.RecordCursor;
import org.appendlog.statebackend.log.RecordFormat;

import org.apache.flink.core.fs.FSDataInputStream;
import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.EnumSource;

import java.io.IOException;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.SplittableRandom;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A streamed batch (format 4: full batches, native savepoints) damaged on disk: every single bit
 * flipped, one at a time, and every truncation. Each read of the batch (its header, footer and
 * every key group) fails with an error naming the file and an offset, and finding the batch's end
 * without a manifest (as {@code verify} does) ends in a location or an {@code IOException}: never
 * another exception, an {@code Error} or a wrong value.
 */
class DamagedStreamedBatchTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("streamed-batch-damage");
    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 15);

    @TempDir java.nio.file.Path tmp;

    @ParameterizedTest(name = "compression {0}")
    @EnumSource(BatchCompression.class)
    void everyFlippedBitAndEveryTruncationFailsTheReadNamingFileAndOffset(
            BatchCompression compression) throws Exception {
        java.nio.file.Path file = tmp.resolve("streamed.seg");
        BatchLocation location = write(file, compression);
        byte[] clean = Files.readAllBytes(file);
        List<String> records = read(file, location);
        assertThat(records).hasSize(60);

        int flips = 0;
        for (int offset = BatchFormat.SEGMENT_HEADER_BYTES; offset < clean.length; offset++) {
            byte[] damaged = clean.clone();
            damaged[offset] ^= (byte) (1 << (offset % 8));
            Files.write(file, damaged);
            assertFailsNamingFileAndOffset(file, location, "bit " + offset % 8 + " of byte " + offset);
            assertLocatedOrFailed(file, "bit " + offset % 8 + " of byte " + offset);
            flips++;
        }
        int truncations = 0;
        for (int length = BatchFormat.SEGMENT_HEADER_BYTES; length < clean.length; length++) {
            Files.write(file, Arrays.copyOf(clean, length));
            assertFailsNamingFileAndOffset(file, location, "cut to " + length + " bytes");
            assertLocatedOrFailed(file, "cut to " + length + " bytes");
            truncations++;
        }
        Files.write(file, clean);
        assertThat(read(file, location)).isEqualTo(records);

        RELIABILITY.record(
                "every bit of a streamed batch flipped, one at a time (" + compression + ", " + flips
                        + " bytes)",
                flips + " of " + flips + " reads fail naming the file and offset; finding the"
                        + " batch's end without a manifest returns a location or an IOException");
        RELIABILITY.record(
                "a streamed batch cut at every length (" + compression + ", " + truncations
                        + " lengths)",
                truncations + " of " + truncations + " reads fail naming the file and offset");
    }

    /**
     * A segment holding one streamed batch of 60 records in 3 of its 16 key groups, in blocks of
     * 64 bytes: several blocks per key group, some compressible, some not.
     */
    private static BatchLocation write(java.nio.file.Path file, BatchCompression compression)
            throws IOException {
        try (OutputStream out = Files.newOutputStream(file)) {
            out.write(BatchFormat.segmentHeader());
            BatchStream batch =
                    new BatchStream(
                            out,
                            "streamed.seg",
                            BatchFormat.SEGMENT_HEADER_BYTES,
                            9,
                            RANGE,
                            List.of("values"),
                            compression,
                            64);
            SplittableRandom random = new SplittableRandom(7);
            for (int kg : new int[] {0, 5, 15}) {
                for (int i = 0; i < 20; i++) {
                    byte[] key = ("key " + kg + "/" + i).getBytes(StandardCharsets.UTF_8);
                    byte[] value = new byte[40];
                    if (i % 2 == 0) {
                        random.nextBytes(value);
                    }
                    RecordFormat.write(batch, kg, 9, 0, key, 0, key.length, value, 0, value.length);
                }
            }
            return batch.finish();
        }
    }

    /** Every record of the batch, read as a restore reads it. */
    private static List<String> read(java.nio.file.Path file, BatchLocation location)
            throws Exception {
        StreamStateHandle handle = new FileStateHandle(new Path(file.toUri()), Files.size(file));
        List<LogScanner.Batch> batches = LogScanner.openBatches(List.of(location), s -> handle);
        List<String> records = new ArrayList<>();
        RecordCursor cursor = new RecordCursor();
        LogScanner.read(
                batches,
                RANGE,
                LogScanner.ReadGate.NONE,
                (batch, kg, read) -> {
                    cursor.reset(read);
                    while (cursor.next()) {
                        records.add(
                                kg
                                        + " "
                                        + new String(
                                                cursor.bytes(),
                                                cursor.keyOffset(),
                                                cursor.keyLength(),
                                                StandardCharsets.UTF_8)
                                        + " "
                                        + Arrays.hashCode(
                                                Arrays.copyOfRange(
                                                        cursor.bytes(),
                                                        cursor.valueOffset(),
                                                        cursor.valueOffset()
                                                                + cursor.valueLength())));
                    }
                });
        return records;
    }

    private static void assertFailsNamingFileAndOffset(
            java.nio.file.Path file, BatchLocation location, String damage) {
        Throwable failure = null;
        try {
            read(file, location);
        } catch (Throwable t) {
            failure = t;
        }
        assertThat(failure).as("reading the batch with %s", damage).isNotNull();
        assertThat(failure).as("%s", damage).isInstanceOf(CorruptLogException.class);
        assertThat(failure.getMessage())
                .as("%s", damage)
                .contains(file.getFileName().toString(), " at offset ");
    }

    /**
     * What {@code verify} does first: find the batch's extent from its header and frames. It ends
     * in a location or an {@code IOException}, which {@code verify} reports with the file and the
     * batch's offset.
     */
    private static void assertLocatedOrFailed(java.nio.file.Path file, String damage)
            throws IOException {
        Path path = new Path(file.toUri());
        try (FSDataInputStream in = path.getFileSystem().open(path)) {
            BatchFormat.locate(
                    in,
                    path.toString(),
                    "streamed.seg",
                    BatchFormat.SEGMENT_HEADER_BYTES,
                    java.nio.file.Files.size(file));
        } catch (IOException expected) {
            // a damaged header or frame
        } catch (RuntimeException | Error e) {
            throw new AssertionError("finding the end of the batch with " + damage, e);
        }
    }
}
