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

package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.CorruptLogException;
import org.appendlog.statebackend.log.WriterLineage;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;

import java.io.EOFException;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;
import java.util.zip.CRC32C;

/**
 * What one checkpoint of one backend consists of; written as the meta state handle of its {@code
 * IncrementalRemoteKeyedStateHandle}: the state meta data (serializer snapshots), the timers, and
 * the batches that together hold the keyed state as of the checkpoint.
 *
 * <pre>
 * manifest := MAGIC:int VERSION:int KeyedBackendSerializationProxy
 *             timersLength:int timers batchCount:int BatchLocation* WriterLineage crc32c:int
 * </pre>
 *
 * The CRC32C covers every byte before it: the timers and the batch list are restored as they
 * are, so a damaged byte must fail the restore, not change a timer. Version 4 added the {@link
 * WriterLineage} (read as {@link WriterLineage#NONE} from earlier versions); version 3 the CRC32C;
 * version 2 tags each queue's timers with their format ({@link TimerFormat}). Manifests of
 * versions 1 to 3 are still read, with every length and count checked against the bytes there
 * are.
 */
public final class CheckpointManifest {

    private static final int MAGIC = 0x414C4D46; // "ALMF"
    private static final int VERSION = 4;
    /** The first version that ends with a CRC32C. */
    private static final int CHECKSUMMED = 3;
    /** The first version that lists the writers the checkpoint descends from. */
    private static final int WITH_LINEAGE = 4;

    final int version;
    final KeyedBackendSerializationProxy<?> metadata;
    final byte[] timers;
    final List<BatchLocation> batches;
    final WriterLineage lineage;

    CheckpointManifest(
            KeyedBackendSerializationProxy<?> metadata,
            byte[] timers,
            List<BatchLocation> batches,
            WriterLineage lineage) {
        this(VERSION, metadata, timers, batches, lineage);
    }

    private CheckpointManifest(
            int version,
            KeyedBackendSerializationProxy<?> metadata,
            byte[] timers,
            List<BatchLocation> batches,
            WriterLineage lineage) {
        this.version = version;
        this.metadata = metadata;
        this.timers = timers;
        this.batches = batches;
        this.lineage = lineage;
    }

    public KeyedBackendSerializationProxy<?> metadata() {
        return metadata;
    }

    /** The timers, as {@link TimerFormat#restore} reads them, with {@link #version}. */
    public byte[] timers() {
        return timers;
    }

    public int version() {
        return version;
    }

    public List<BatchLocation> batches() {
        return batches;
    }

    public WriterLineage lineage() {
        return lineage;
    }

    void write(DataOutputView out) throws IOException {
        DataOutputSerializer bytes = new DataOutputSerializer(256 + timers.length);
        bytes.writeInt(MAGIC);
        bytes.writeInt(VERSION);
        metadata.write(bytes);
        bytes.writeInt(timers.length);
        bytes.write(timers);
        bytes.writeInt(batches.size());
        for (BatchLocation batch : batches) {
            batch.write(bytes);
        }
        lineage.write(bytes);
        CRC32C crc = new CRC32C();
        crc.update(bytes.getSharedBuffer(), 0, bytes.length());
        bytes.writeInt((int) crc.getValue());
        out.write(bytes.getSharedBuffer(), 0, bytes.length());
    }

    /** True if the stream starts like a manifest, i.e. the checkpoint was written by appendlog. */
    public static boolean startsWithMagic(DataInputView in) throws IOException {
        return in.readInt() == MAGIC;
    }

    /**
     * Reads the manifest {@code bytes} read from {@code file}; a damaged one fails with a {@link
     * CorruptLogException} naming the file and the offset.
     */
    public static CheckpointManifest read(byte[] bytes, String file, ClassLoader classLoader)
            throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(bytes);
        try {
            if (in.readInt() != MAGIC) {
                throw new CorruptLogException(file, 0, "not an appendlog manifest (no magic)");
            }
            int version = in.readInt();
            if (version < 1 || version > VERSION) {
                throw new CorruptLogException(
                        file, 4, "unsupported appendlog manifest version " + version);
            }
            if (version >= CHECKSUMMED) {
                int end = bytes.length - 4;
                CRC32C crc = new CRC32C();
                crc.update(bytes, 0, end);
                if ((int) crc.getValue() != getInt(bytes, end)) {
                    throw new CorruptLogException(
                            file,
                            end,
                            "CRC32C mismatch: the manifest ("
                                    + bytes.length
                                    + " bytes) is damaged or cut off");
                }
                in.setBuffer(bytes, 8, end - 8);
            }
            KeyedBackendSerializationProxy<?> metadata =
                    new KeyedBackendSerializationProxy<>(classLoader);
            int at = in.getPosition();
            try {
                metadata.read(in);
            } catch (RuntimeException e) {
                throw new CorruptLogException(
                        file, at, "unreadable state meta data in the manifest: " + e);
            }
            at = in.getPosition();
            int timersLength = in.readInt();
            if (timersLength < 0 || timersLength > in.available()) {
                throw new CorruptLogException(
                        file,
                        at,
                        "manifest gives "
                                + timersLength
                                + " bytes of timers, "
                                + in.available()
                                + " bytes follow");
            }
            byte[] timers = new byte[timersLength];
            in.readFully(timers);
            at = in.getPosition();
            int count = in.readInt();
            if (count < 0 || count > in.available() / BatchLocation.MIN_WRITTEN_BYTES) {
                throw new CorruptLogException(
                        file,
                        at,
                        "manifest lists "
                                + count
                                + " batches in the "
                                + in.available()
                                + " bytes that follow");
            }
            List<BatchLocation> batches = new ArrayList<>(count);
            for (int i = 0; i < count; i++) {
                batches.add(BatchLocation.read(in, file));
            }
            at = in.getPosition();
            WriterLineage lineage;
            try {
                lineage = version >= WITH_LINEAGE ? WriterLineage.read(in) : WriterLineage.NONE;
            } catch (IOException | RuntimeException e) {
                throw new CorruptLogException(
                        file, at, "unreadable writer lineage in the manifest: " + e.getMessage());
            }
            if (version >= CHECKSUMMED && in.available() != 0) {
                throw new CorruptLogException(
                        file, in.getPosition(), in.available() + " bytes after the manifest's end");
            }
            return new CheckpointManifest(version, metadata, timers, batches, lineage);
        } catch (EOFException e) {
            throw new CorruptLogException(
                    file, in.getPosition(), "manifest is cut off (" + bytes.length + " bytes)");
        }
    }

    private static int getInt(byte[] b, int p) {
        return ((b[p] & 0xFF) << 24)
                | ((b[p + 1] & 0xFF) << 16)
                | ((b[p + 2] & 0xFF) << 8)
                | (b[p + 3] & 0xFF);
    }

    /** The batches restricted to those that hold key groups of {@code range}. */
    public List<BatchLocation> batchesFor(KeyGroupRange range) {
        List<BatchLocation> result = new ArrayList<>();
        for (BatchLocation batch : batches) {
            if (batch.keyGroups().getIntersection(range).getNumberOfKeyGroups() > 0) {
                result.add(batch);
            }
        }
        return result;
    }
}
