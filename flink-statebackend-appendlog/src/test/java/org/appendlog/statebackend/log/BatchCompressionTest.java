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

package org.appendlog.statebackend.log;

import org.appendlog.statebackend.log.LogScanner.Batch;

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.ByteBuffer;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Batches whose key groups are LZ4 blocks: the same records read back as from an uncompressed
 * batch, fewer bytes on disk, the raw length counted as the index counts records; batches stored
 * raw keep format version 2.
 */
class BatchCompressionTest {

    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 15);
    private static final List<String> STATES = List.of("counts", "noise");

    @TempDir File dir;

    @Test
    void compressedBatchesReadBackTheSameRecordsInFewerBytes() throws Exception {
        Written plain = write(BatchCompression.NONE, batch());
        Written lz4 = write(BatchCompression.LZ4, batch());

        assertThat(records(lz4)).isEqualTo(records(plain)).hasSize(2_000);
        assertThat(lz4.location.length())
                .as("bytes of the compressed batch")
                .isLessThan(plain.location.length() * 2 / 3);
        // Uncompressed, it is the raw batch and the version 3 header's compression, stored and
        // raw lengths (17 bytes).
        long uncompressed = plain.location.length() + 17;
        assertThat(plain.location.rawLength()).isEqualTo(plain.location.length());
        assertThat(lz4.location.rawLength())
                .as("the compressed batch counted uncompressed, as written")
                .isEqualTo(uncompressed);
        assertThat(opened(lz4).location().rawLength())
                .as("the compressed batch counted uncompressed, as read from its header")
                .isEqualTo(uncompressed);
        assertThat(located(lz4).length())
                .as("a reader without a manifest finds the batch's end")
                .isEqualTo(lz4.location.length());
        assertThat(located(lz4).rawLength()).isEqualTo(uncompressed);
    }

    /** Random bytes do not compress: such a key group is stored as it is, 4 bytes longer. */
    @Test
    void aKeyGroupThatDoesNotCompressIsStoredRaw() throws Exception {
        BatchBuilder random = new BatchBuilder(3, KeyGroupRange.of(0, 0), STATES);
        byte[] noise = new byte[10_000];
        new Random(7).nextBytes(noise);
        byte[] key = "k".getBytes(StandardCharsets.UTF_8);
        RecordFormat.write(random, 0, 3, 1, key, 0, key.length, noise, 0, noise.length);
        Written plain = write(BatchCompression.NONE, random);
        Written lz4 = write(BatchCompression.LZ4, random);

        assertThat(opened(lz4).index.keyGroupLength(0))
                .isEqualTo(opened(plain).index.keyGroupLength(0) + 4);
        assertThat(records(lz4)).isEqualTo(records(plain));
    }

    /**
     * Errors name a record's place so that a hex dump finds it: records stored as they are (also
     * LZ4's raw-stored blocks, behind their 4-byte length) by the file offset of their bytes; a
     * decompressed record by its block's file offset, where the block's uncompressed length is,
     * and its place among those uncompressed bytes.
     */
    @Test
    void recordPositionsPointAtTheirBytesInTheFile() throws Exception {
        BatchBuilder random = new BatchBuilder(3, KeyGroupRange.of(0, 0), STATES);
        Random seeded = new Random(7);
        for (int i = 0; i < 3; i++) {
            byte[] key = ("k" + i).getBytes(StandardCharsets.UTF_8);
            byte[] noise = new byte[1_000];
            seeded.nextBytes(noise);
            RecordFormat.write(random, 0, 3, 1, key, 0, key.length, noise, 0, noise.length);
        }
        for (Written stored :
                List.of(write(BatchCompression.NONE, batch()), write(BatchCompression.LZ4, random))) {
            byte[] file = Files.readAllBytes(stored.file.toPath());
            List<Integer> checked = new ArrayList<>();
            forEachRecord(
                    stored,
                    (kg, cursor) -> {
                        int at = Integer.parseInt(cursor.position().substring("offset ".length()));
                        assertThat(Arrays.copyOfRange(file, at, at + cursor.encodedLength()))
                                .as("record at %s of %s", cursor.position(), stored.file)
                                .isEqualTo(Arrays.copyOfRange(cursor.bytes(), cursor.offset(),
                                        cursor.offset() + cursor.encodedLength()));
                        checked.add(at);
                    });
            assertThat(checked).hasSizeGreaterThanOrEqualTo(3).doesNotHaveDuplicates();
        }

        Written compressed = write(BatchCompression.LZ4, batch());
        byte[] file = Files.readAllBytes(compressed.file.toPath());
        Pattern position =
                Pattern.compile("offset (\\d+) \\(an LZ4 block: the record starts at byte (\\d+)"
                        + " of its (\\d+) uncompressed bytes\\)");
        Map<Integer, Integer> blockOfKeyGroup = new HashMap<>();
        // Per key group, where its next record starts among the uncompressed bytes, and their count.
        Map<Integer, Integer> nextByte = new HashMap<>();
        Map<Integer, Integer> uncompressed = new HashMap<>();
        forEachRecord(
                compressed,
                (kg, cursor) -> {
                    Matcher matcher = position.matcher(cursor.position());
                    assertThat(matcher.matches()).as(cursor.position()).isTrue();
                    int block = Integer.parseInt(matcher.group(1));
                    int length = Integer.parseInt(matcher.group(3));
                    assertThat(blockOfKeyGroup.computeIfAbsent(kg, k -> block)).isEqualTo(block);
                    assertThat(ByteBuffer.wrap(file, block, 4).getInt())
                            .as("the uncompressed length at the block's offset")
                            .isEqualTo(length);
                    assertThat(Integer.parseInt(matcher.group(2)))
                            .as("the record's byte in its block")
                            .isEqualTo(nextByte.getOrDefault(kg, 0));
                    nextByte.put(kg, nextByte.getOrDefault(kg, 0) + cursor.encodedLength());
                    uncompressed.put(kg, length);
                });
        assertThat(blockOfKeyGroup).hasSize(16);
        assertThat(new HashSet<>(blockOfKeyGroup.values())).hasSize(16);
        assertThat(nextByte).as("each block's records end at its end").isEqualTo(uncompressed);
    }

    /**
     * A block whose CRC matches but which does not decompress (written wrong, not damaged on
     * disk) fails with the file and the key group's offset.
     */
    @Test
    void aBlockThatDoesNotDecompressNamesTheFileAndOffset() {
        byte[] block = {0, 0, 0, 100, 1, 2, 3};
        assertThatThrownBy(() -> BatchCompression.LZ4.decode(block, 0, block.length, "f.seg", 42))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("f.seg")
                .hasMessageContaining("42");
    }

    /**
     * Stored raw, a batch is written as format version 2 wrote it, which earlier versions of the
     * backend read (a job can go back to them), and is read as before.
     */
    @Test
    void batchesStoredRawKeepTheFormatEarlierVersionsRead() throws Exception {
        Written plain = write(BatchCompression.NONE, batch());
        byte[] segment = Files.readAllBytes(plain.file.toPath());
        assertThat(segment[BatchFormat.SEGMENT_HEADER_BYTES + 4])
                .as("batch format version")
                .isEqualTo((byte) 2);
        assertThat(records(plain)).isEqualTo(records(write(BatchCompression.LZ4, batch())));
        assertThat(located(plain).length()).isEqualTo(plain.location.length());
    }

    /**
     * A flipped byte in a version 3 header's lengths, which a reader without a manifest must use
     * before any CRC can be checked, is reported, not followed.
     */
    @Test
    void aReaderWithoutAManifestRejectsImpossibleHeaderLengths() throws Exception {
        Written lz4 = write(BatchCompression.LZ4, batch());
        byte[] segment = Files.readAllBytes(lz4.file.toPath());
        int storedLength = BatchFormat.SEGMENT_HEADER_BYTES + (int) headerLength(segment) - 16;
        segment[storedLength] = (byte) 0x80; // the stored length's sign bit
        Files.write(lz4.file.toPath(), segment);
        assertThatThrownBy(() -> located(lz4))
                .isInstanceOf(CorruptLogException.class)
                .hasMessageContaining("impossible lengths")
                .hasMessageContaining(lz4.file.getPath());
    }

    /** The header length that a segment's one batch gives in its footer. */
    private static long headerLength(byte[] segment) {
        return ByteBuffer.wrap(segment).getInt(segment.length - 12);
    }

    /** 2 000 records over 16 key groups: repetitive keys and values, as word counts have. */
    private static BatchBuilder batch() throws Exception {
        BatchBuilder builder = new BatchBuilder(5, RANGE, STATES);
        Random random = new Random(11);
        for (int i = 0; i < 2_000; i++) {
            byte[] key = ("word-" + random.nextInt(50_000)).getBytes(StandardCharsets.UTF_8);
            byte[] value =
                    i % 10 == 0
                            ? null
                            : ("count " + random.nextInt(100)).getBytes(StandardCharsets.UTF_8);
            RandomRecords.add(builder, random, random.nextInt(16), 5, key, value);
        }
        return builder;
    }

    private static final class Written {
        final File file;
        final BatchLocation location;

        Written(File file, BatchLocation location) {
            this.file = file;
            this.location = location;
        }
    }

    private Written write(BatchCompression compression, BatchBuilder batch) throws Exception {
        File file = new File(dir, compression + "-" + System.nanoTime() + ".seg");
        try (OutputStream out = new FileOutputStream(file)) {
            out.write(BatchFormat.segmentHeader());
            return new Written(
                    file,
                    BatchFormat.write(
                            out,
                            file.getName(),
                            BatchFormat.SEGMENT_HEADER_BYTES,
                            batch,
                            compression));
        }
    }

    private static Batch opened(Written written) throws Exception {
        FileStateHandle handle =
                new FileStateHandle(new Path(written.file.toURI()), written.file.length());
        return LogScanner.openBatches(List.of(written.location), segment -> handle).get(0);
    }

    private static BatchLocation located(Written written) throws Exception {
        Path path = new Path(written.file.toURI());
        try (org.apache.flink.core.fs.FSDataInputStream in = path.getFileSystem().open(path)) {
            return BatchFormat.locate(
                    in,
                    written.file.getPath(),
                    written.file.getName(),
                    BatchFormat.SEGMENT_HEADER_BYTES,
                    written.file.length());
        }
    }

    /** Visits every record of the batch, the cursor positioned on it. */
    private static void forEachRecord(Written written, RecordVisitor visitor) throws Exception {
        Batch batch = opened(written);
        RecordCursor cursor = new RecordCursor();
        LogScanner.read(
                List.of(batch),
                batch.location().keyGroups(),
                LogScanner.ReadGate.NONE,
                (b, kg, keyGroupRecords) -> {
                    cursor.reset(keyGroupRecords);
                    while (cursor.next()) {
                        visitor.accept(kg, cursor);
                    }
                });
    }

    @FunctionalInterface
    private interface RecordVisitor {
        void accept(int keyGroup, RecordCursor cursor) throws IOException;
    }

    /** Every record as "key group, state, checkpoint, key, value or tombstone", in file order. */
    private static List<String> records(Written written) throws Exception {
        List<String> records = new ArrayList<>();
        forEachRecord(
                written,
                (kg, cursor) -> {
                    byte[] data = cursor.bytes();
                    String key =
                            new String(
                                    data, cursor.keyOffset(), cursor.keyLength(), StandardCharsets.UTF_8);
                    String value =
                            cursor.isTombstone()
                                    ? "tombstone"
                                    : new String(
                                            data,
                                            cursor.valueOffset(),
                                            cursor.valueLength(),
                                            StandardCharsets.UTF_8);
                    records.add(
                            kg + " " + cursor.stateId() + " " + cursor.checkpointId() + " " + key
                                    + " " + value);
                });
        return records;
    }
}
