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

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.List;
import java.util.Set;

import static org.assertj.core.api.Assertions.assertThat;

/** Split and enumerator state round trips, and the version 1 bytes that bounded sources checkpointed. */
class CecLogSplitSerializerTest {

    private static final LogPosition END = new LogPosition("seg-0000000004-0a1b2c3d.log", 4_096);
    private static final LogPosition RESUME = new LogPosition("seg-0000000002-77aa01fe.log", 812);

    @Test
    void splitsRoundTripWithAndWithoutACommittedEnd() throws IOException {
        for (CecLogSplit split :
                new CecLogSplit[] {
                    new CecLogSplit("file:/cec/subtask-0001", END, 17, RESUME),
                    new CecLogSplit("file:/cec/subtask-0001", null, Long.MIN_VALUE, null),
                    new CecLogSplit("file:/cec/subtask-0002", null, 5, RESUME)
                }) {
            CecLogSplitSerializer serializer = CecLogSplitSerializer.INSTANCE;
            assertThat(serializer.deserialize(serializer.getVersion(), serializer.serialize(split)))
                    .usingRecursiveComparison()
                    .isEqualTo(split);
        }
    }

    @Test
    void version1SplitsAndEnumeratorStatesAreStillRead() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(1); // one unassigned split, as version 1 wrote it: directory, end, from, resume
        out.writeUTF("file:/cec/subtask-0003");
        END.write(out);
        out.writeLong(42);
        out.writeBoolean(true);
        RESUME.write(out);
        out.flush();

        CecLogEnumeratorState state = new CecLogEnumeratorStateSerializer().deserialize(1, bytes.toByteArray());

        assertThat(state.unassigned())
                .usingRecursiveFieldByFieldElementComparator()
                .containsExactly(new CecLogSplit("file:/cec/subtask-0003", END, 42, RESUME));
        assertThat(state.discovered()).isEmpty();
    }

    @Test
    void enumeratorStatesRoundTrip() throws IOException {
        CecLogEnumeratorState state =
                new CecLogEnumeratorState(
                        List.of(new CecLogSplit("file:/cec/subtask-0001", null, 3, RESUME)),
                        Set.of("file:/cec/subtask-0000", "file:/cec/subtask-0001"));
        CecLogEnumeratorStateSerializer serializer = new CecLogEnumeratorStateSerializer();
        CecLogEnumeratorState read = serializer.deserialize(serializer.getVersion(), serializer.serialize(state));
        assertThat(read.unassigned()).usingRecursiveFieldByFieldElementComparator().isEqualTo(state.unassigned());
        assertThat(read.discovered()).isEqualTo(state.discovered());
    }
}
