package org.appendlog.statebackend.log;

import org.appendlog.statebackend.log.LogScanner.Batch;

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.FileOutputStream;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Batches whose key groups are LZ4 blocks: the same records read back as from an uncompressed
 * batch, fewer bytes on disk, the raw length counted as the uncompressed batch's length, and
 * batches of the previous format (version 2) still read.
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
        assertThat(lz4.location.rawLength())
                .as("the compressed batch counted uncompressed, as written")
                .isEqualTo(plain.location.length())
                .isEqualTo(plain.location.rawLength());
        assertThat(opened(lz4).location().rawLength())
                .as("the compressed batch counted uncompressed, as read from its header")
                .isEqualTo(plain.location.length());
        assertThat(located(lz4).length())
                .as("a reader without a manifest finds the batch's end")
                .isEqualTo(lz4.location.length());
        assertThat(located(lz4).rawLength()).isEqualTo(plain.location.length());
    }

    /** Random bytes do not compress: such a key group is stored as it is, 4 bytes longer. */
    @Test
    void aKeyGroupThatDoesNotCompressIsStoredRaw() throws Exception {
        BatchBuilder random = new BatchBuilder(3, KeyGroupRange.of(0, 0), STATES);
        byte[] noise = new byte[10_000];
        new Random(7).nextBytes(noise);
        byte[] key = "k".getBytes(StandardCharsets.UTF_8);
        random.add(0, 3, 1, key, 0, key.length, noise, 0, noise.length);
        Written plain = write(BatchCompression.NONE, random);
        Written lz4 = write(BatchCompression.LZ4, random);

        assertThat(opened(lz4).index.keyGroupLength(0))
                .isEqualTo(opened(plain).index.keyGroupLength(0) + 4);
        assertThat(records(lz4)).isEqualTo(records(plain));
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

    /** Logs written before compression (batch format version 2) restore as they did. */
    @Test
    void batchesOfTheUncompressedFormatAreStillRead() throws Exception {
        Written plain = write(BatchCompression.NONE, batch());
        File old = new File(dir, "old.seg");
        Files.write(old.toPath(), asVersion2(Files.readAllBytes(plain.file.toPath())));
        long length = old.length() - BatchFormat.SEGMENT_HEADER_BYTES;
        Written version2 =
                new Written(
                        old,
                        new BatchLocation(
                                "old.seg",
                                BatchFormat.SEGMENT_HEADER_BYTES,
                                length,
                                plain.location.checkpointId(),
                                plain.location.minCheckpointId(),
                                RANGE));

        assertThat(records(version2)).isEqualTo(records(plain));
        assertThat(opened(version2).location().rawLength()).isEqualTo(length);
        assertThat(located(version2).length()).isEqualTo(length);
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
            builder.add(
                    random.nextInt(16),
                    5 - random.nextInt(3),
                    random.nextInt(2),
                    key,
                    0,
                    key.length,
                    value,
                    0,
                    value == null ? 0 : value.length);
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
                    BatchFormat.SEGMENT_HEADER_BYTES);
        }
    }

    /** Every record as "key group, state, checkpoint, key, value or tombstone", in file order. */
    private static List<String> records(Written written) throws Exception {
        Batch batch = opened(written);
        List<String> records = new ArrayList<>();
        RecordCursor cursor = new RecordCursor();
        LogScanner.read(
                List.of(batch),
                RANGE,
                LogScanner.ReadGate.NONE,
                (b, kg, bytes, offset, length, fileOffset) -> {
                    cursor.reset(bytes, offset, length, b.file(), fileOffset);
                    while (cursor.next()) {
                        byte[] data = cursor.bytes();
                        records.add(
                                kg
                                        + " "
                                        + cursor.stateId()
                                        + " "
                                        + cursor.checkpointId()
                                        + " "
                                        + new String(
                                                data,
                                                cursor.keyOffset(),
                                                cursor.keyLength(),
                                                StandardCharsets.UTF_8)
                                        + " "
                                        + (cursor.isTombstone()
                                                ? "tombstone"
                                                : new String(
                                                        data,
                                                        cursor.valueOffset(),
                                                        cursor.valueLength(),
                                                        StandardCharsets.UTF_8)));
                    }
                });
        return records;
    }

    /**
     * The segment with its one batch rewritten as format version 2 wrote it: no compression
     * fields in the header (17 bytes fewer), footer offsets and header length shifted, CRC
     * recomputed.
     */
    private static byte[] asVersion2(byte[] segment) {
        int batchStart = BatchFormat.SEGMENT_HEADER_BYTES;
        java.nio.ByteBuffer in = java.nio.ByteBuffer.wrap(segment);
        int groups = RANGE.getNumberOfKeyGroups();
        int footerLength = groups * 16 + 12;
        int footerStart = segment.length - footerLength;
        int headerLength = in.getInt(footerStart + groups * 16);
        int newHeaderLength = headerLength - 17;
        byte[] header = Arrays.copyOfRange(segment, batchStart, batchStart + newHeaderLength);
        header[4] = 2;
        byte[] body = Arrays.copyOfRange(segment, batchStart + headerLength, footerStart);
        java.nio.ByteBuffer footer = java.nio.ByteBuffer.allocate(footerLength);
        for (int i = 0; i < groups; i++) {
            int entry = footerStart + i * 16;
            footer.putLong(in.getLong(entry) - 17);
            footer.putInt(in.getInt(entry + 8));
            footer.putInt(in.getInt(entry + 12));
        }
        footer.putInt(newHeaderLength);
        java.util.zip.CRC32C crc = new java.util.zip.CRC32C();
        crc.update(header);
        crc.update(footer.array(), 0, footer.position());
        footer.putInt((int) crc.getValue());
        footer.putInt(in.getInt(segment.length - 4));
        java.nio.ByteBuffer out =
                java.nio.ByteBuffer.allocate(batchStart + header.length + body.length + footerLength);
        out.put(segment, 0, batchStart).put(header).put(body).put(footer.array());
        return out.array();
    }
}
