package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.WriterLineage;

import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyedBackendSerializationProxy;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * What one checkpoint of one backend consists of; written as the meta state handle of its {@code
 * IncrementalRemoteKeyedStateHandle}: the state meta data (serializer snapshots), the timers, and
 * the batches that together hold the keyed state as of the checkpoint.
 *
 * <pre>
 * manifest := MAGIC:int VERSION:int KeyedBackendSerializationProxy
 *             timersLength:int timers batchCount:int BatchLocation* WriterLineage
 * </pre>
 *
 * Version 2 tags each queue's timers with their format ({@link TimerFormat}); version 3 adds the
 * {@link WriterLineage} (read as {@link WriterLineage#NONE} from earlier versions); versions 1
 * and 2 are still read.
 */
public final class CheckpointManifest {

    private static final int MAGIC = 0x414C4D46; // "ALMF"
    private static final int VERSION = 3;

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
        out.writeInt(MAGIC);
        out.writeInt(VERSION);
        metadata.write(out);
        out.writeInt(timers.length);
        out.write(timers);
        out.writeInt(batches.size());
        for (BatchLocation batch : batches) {
            batch.write(out);
        }
        lineage.write(out);
    }

    /** True if the stream starts like a manifest, i.e. the checkpoint was written by appendlog. */
    public static boolean startsWithMagic(DataInputView in) throws IOException {
        return in.readInt() == MAGIC;
    }

    /** Reads a manifest after {@link #startsWithMagic} consumed the magic. */
    public static CheckpointManifest readAfterMagic(DataInputView in, ClassLoader classLoader)
            throws IOException {
        int version = in.readInt();
        if (version < 1 || version > VERSION) {
            throw new IOException("Unsupported appendlog manifest version " + version);
        }
        KeyedBackendSerializationProxy<?> metadata =
                new KeyedBackendSerializationProxy<>(classLoader);
        metadata.read(in);
        byte[] timers = new byte[in.readInt()];
        in.readFully(timers);
        int count = in.readInt();
        List<BatchLocation> batches = new ArrayList<>(count);
        for (int i = 0; i < count; i++) {
            batches.add(BatchLocation.read(in));
        }
        WriterLineage lineage = version >= 3 ? WriterLineage.read(in) : WriterLineage.NONE;
        return new CheckpointManifest(version, metadata, timers, batches, lineage);
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
