package org.appendlog.cec.source;

import org.apache.flink.core.io.SimpleVersionedSerializer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;

/** Serializes the enumerator's not yet assigned splits. */
final class CecLogEnumeratorStateSerializer implements SimpleVersionedSerializer<Collection<CecLogSplit>> {

    @Override
    public int getVersion() {
        return 1;
    }

    @Override
    public byte[] serialize(Collection<CecLogSplit> splits) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(splits.size());
        for (CecLogSplit split : splits) {
            CecLogSplitSerializer.write(split, out);
        }
        out.flush();
        return bytes.toByteArray();
    }

    @Override
    public Collection<CecLogSplit> deserialize(int version, byte[] serialized) throws IOException {
        if (version != 1) {
            throw new IOException("Unknown CEC source enumerator state version " + version);
        }
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized));
        int n = in.readInt();
        if (n < 0 || n > serialized.length) {
            throw new IOException("CEC source enumerator state of " + serialized.length + " bytes counts " + n + " splits");
        }
        List<CecLogSplit> splits = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            splits.add(CecLogSplitSerializer.read(in));
        }
        return splits;
    }
}
