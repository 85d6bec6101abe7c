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

package org.appendlog.cec.log;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.ByteArrayOutputStream;
import java.io.DataOutputStream;
import java.io.File;
import java.nio.file.Files;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Segment headers of both versions are read; a damaged back link fails naming file and offset. */
class SegmentHeaderTest {

    @TempDir File tmp;

    @Test
    void aVersionOneHeaderWithoutChecksumIsRead() throws Exception {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream();
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(SegmentHeader.MAGIC);
        out.writeInt(4 + 4 + 4 + 4 + 8 + 8 + 2 + "seg-0000000003-abcd0123.log".length());
        out.writeInt(1);
        out.writeInt(5);
        out.writeLong(4);
        out.writeLong(4_096);
        out.writeUTF("seg-0000000003-abcd0123.log");
        out.flush();
        File file = new File(tmp, "seg-0000000004-00000000.log");
        Files.write(file.toPath(), bytes.toByteArray());

        SegmentHeader header = SegmentHeader.read(FileSystem.getLocalFileSystem(), new Path(file.toURI()));
        assertThat(header.subtask()).isEqualTo(5);
        assertThat(header.sequence()).isEqualTo(4);
        assertThat(header.predecessorEnd()).isEqualTo(new LogPosition("seg-0000000003-abcd0123.log", 4_096));
        assertThat(header.length()).isEqualTo(bytes.size());
    }

    @Test
    void aBackLinkLengthWithABitFlippedFailsNamingTheSegment() throws Exception {
        byte[] encoded = SegmentHeader.encode(0, 4, new LogPosition("seg-0000000003-abcd0123.log", 4_096));
        File file = new File(tmp, "seg-0000000004-00000000.log");
        Files.write(file.toPath(), encoded);
        Path path = new Path(file.toURI());
        assertThat(SegmentHeader.read(FileSystem.getLocalFileSystem(), path).predecessorEnd().offset()).isEqualTo(4_096);

        // The valid length 4 096 becomes 4 160, as plausible: only the CRC tells.
        encoded[31] ^= 0x40;
        Files.write(file.toPath(), encoded);
        assertThatThrownBy(() -> SegmentHeader.read(FileSystem.getLocalFileSystem(), path))
                .isInstanceOf(CorruptCecLogException.class)
                .hasMessageContaining(file.getName())
                .hasMessageContaining("at offset " + (encoded.length - 4))
                .hasMessageContaining("CRC32C mismatch");
    }
}
