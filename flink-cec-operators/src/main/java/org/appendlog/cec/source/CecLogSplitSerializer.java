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

package org.appendlog.cec.source;

import org.appendlog.cec.log.LogPosition;

import org.apache.flink.core.io.SimpleVersionedSerializer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/**
 * Serializes {@link CecLogSplit}s for checkpoints of the source. Version 1 always had a committed
 * end; version 2 marks its presence (a following split has none).
 */
public final class CecLogSplitSerializer implements SimpleVersionedSerializer<CecLogSplit> {

    static final CecLogSplitSerializer INSTANCE = new CecLogSplitSerializer();

    private static final int VERSION = 2;

    @Override
    public int getVersion() {
        return VERSION;
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
        return read(new DataInputStream(new ByteArrayInputStream(serialized)), version);
    }

    static void write(CecLogSplit split, DataOutputStream out) throws IOException {
        out.writeUTF(split.directory());
        writeOptional(split.committedEnd(), out);
        out.writeLong(split.fromTimestamp());
        writeOptional(split.resumeAt(), out);
    }

    static CecLogSplit read(DataInputStream in, int version) throws IOException {
        if (version != 1 && version != VERSION) {
            throw new IOException("Unknown CecLogSplit serialization version " + version);
        }
        String directory = in.readUTF();
        LogPosition end = version == 1 || in.readBoolean() ? LogPosition.read(in) : null;
        long from = in.readLong();
        LogPosition resume = in.readBoolean() ? LogPosition.read(in) : null;
        return new CecLogSplit(directory, end, from, resume);
    }

    private static void writeOptional(LogPosition position, DataOutputStream out) throws IOException {
        out.writeBoolean(position != null);
        if (position != null) {
            position.write(out);
        }
    }
}
