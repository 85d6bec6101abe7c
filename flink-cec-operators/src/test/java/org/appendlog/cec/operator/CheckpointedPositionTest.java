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

package org.appendlog.cec.operator;

import org.appendlog.cec.log.LogPosition;

import org.junit.jupiter.api.Test;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The operator state's bytes: the current version round-trips, older versions are still read. */
class CheckpointedPositionTest {

    private static final LogPosition END = new LogPosition("seg-0000000003-0a1b2c3d.log", 4_096);
    private static final LogPosition HORIZON = new LogPosition("seg-0000000002-0a1b2c3d.log", 512);

    @Test
    void theCurrentVersionRoundTripsWithItsGeneration() throws IOException {
        CheckpointedPosition position =
                new CheckpointedPosition(2, 3, 17L, END, 3L, 40, 1_000L, 900L, HORIZON, true);

        CheckpointedPosition read = CheckpointedPosition.fromBytes(position.toBytes());

        assertThat(read.generation).isEqualTo(17L);
        assertThat(read.toString()).isEqualTo(position.toString());
        assertThat(read.inputLogged).isTrue();
        assertThat(read.streamTime).isEqualTo(1_000L);
        assertThat(read.watermark).isEqualTo(900L);
        assertThat(read.segmentSequence).isEqualTo(3L);
    }

    @Test
    void version2BytesAreOfTheFirstGeneration() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(2);
        out.writeInt(1);
        out.writeInt(2);
        END.write(out);
        out.writeLong(3L);
        out.writeInt(40);
        out.writeLong(1_000L);
        out.writeLong(900L);
        HORIZON.write(out);
        out.writeBoolean(true);

        CheckpointedPosition read = CheckpointedPosition.fromBytes(bytes.toByteArray());

        assertThat(read.generation).isZero();
        assertThat(read.subtask).isEqualTo(1);
        assertThat(read.parallelism).isEqualTo(2);
        assertThat(read.end).isEqualTo(END);
        assertThat(read.recoveryHorizon()).isEqualTo(HORIZON);
        assertThat(read.openWindows).isEqualTo(40);
        assertThat(read.inputLogged).isTrue();
    }

    @Test
    void anUnknownVersionIsRefusedNamingTheVersions() {
        byte[] bytes = {0, 0, 0, 4};
        assertThatThrownBy(() -> CheckpointedPosition.fromBytes(bytes))
                .isInstanceOf(IOException.class)
                .hasMessage("Unknown CEC operator state version 4 (expected 1 to 3)");
    }
}
