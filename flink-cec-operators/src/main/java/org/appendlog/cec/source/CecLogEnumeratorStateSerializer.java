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

import org.apache.flink.core.io.SimpleVersionedSerializer;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;

/**
 * Serializes the enumerator's state. Version 1 held only the unassigned splits (of a bounded
 * source); version 2 adds the subtask directories a following source has found.
 */
final class CecLogEnumeratorStateSerializer implements SimpleVersionedSerializer<CecLogEnumeratorState> {

    private static final int VERSION = 2;

    @Override
    public int getVersion() {
        return VERSION;
    }

    @Override
    public byte[] serialize(CecLogEnumeratorState state) throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(state.unassigned().size());
        for (CecLogSplit split : state.unassigned()) {
            CecLogSplitSerializer.write(split, out);
        }
        out.writeInt(state.discovered().size());
        for (String directory : state.discovered()) {
            out.writeUTF(directory);
        }
        out.flush();
        return bytes.toByteArray();
    }

    @Override
    public CecLogEnumeratorState deserialize(int version, byte[] serialized) throws IOException {
        if (version != 1 && version != VERSION) {
            throw new IOException("Unknown CEC source enumerator state version " + version);
        }
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(serialized));
        int n = count(in, serialized, "splits");
        List<CecLogSplit> splits = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            splits.add(CecLogSplitSerializer.read(in, version));
        }
        if (version == 1) {
            return new CecLogEnumeratorState(splits, Collections.emptySet());
        }
        int d = count(in, serialized, "directories");
        List<String> discovered = new ArrayList<>(d);
        for (int i = 0; i < d; i++) {
            discovered.add(in.readUTF());
        }
        return new CecLogEnumeratorState(splits, discovered);
    }

    private static int count(DataInputStream in, byte[] serialized, String what) throws IOException {
        int n = in.readInt();
        if (n < 0 || n > serialized.length) {
            throw new IOException("CEC source enumerator state of " + serialized.length + " bytes counts " + n + " " + what);
        }
        return n;
    }
}
