package org.appendlog.cec.source;

import org.appendlog.cec.log.LogPosition;

import org.apache.flink.core.io.SimpleVersionedSerializer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/** Serializes {@link CecLogSplit}s for checkpoints of the source. */
public final class CecLogSplitSerializer implements SimpleVersionedSerializer<CecLogSplit> {

    static final CecLogSplitSerializer INSTANCE = new CecLogSplitSerializer();

    @Override
    public int getVersion() {
        return 1;
    }

    @Override
    public byte[] serialize(CecLogSplit split) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        write(split, out);
        out.flush();
        return bytes.toByteArray();
    }

    @Override
    public CecLogSplit deserialize(int version, byte[] serialized) throws IOException {
        if (version != 1) {
            throw new IOException("Unknown CecLogSplit serialization version " + version);
        }
        return read(new DataInputStream(new ByteArrayInputStream(serialized)));
    }

    static void write(CecLogSplit split, DataOutputStream out) throws IOException {
        out.writeUTF(split.directory());
        split.committedEnd().write(out);
        out.writeLong(split.fromTimestamp());
        out.writeBoolean(split.resumeAt() != null);
        if (split.resumeAt() != null) {
            split.resumeAt().write(out);
        }
    }

    static CecLogSplit read(DataInputStream in) throws IOException {
        String directory = in.readUTF();
        LogPosition end = LogPosition.read(in);
        long from = in.readLong();
        LogPosition resume = in.readBoolean() ? LogPosition.read(in) : null;
        return new CecLogSplit(directory, end, from, resume);
    }
}
