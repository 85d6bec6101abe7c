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

package org.appendlog.statebackend.log;

import org.appendlog.statebackend.SyncMode;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.runtime.state.KeyGroupRange;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * A closed log writes nothing more. A cancelled task disposes its backend without waiting for the
 * asynchronous phases it interrupted; a segment that one of them opened after the close would be
 * nobody's to delete (seen once in a job: a segment of the attempt that failed over was left after
 * the job finished).
 */
class SegmentedLogTest {

    private static final KeyGroupRange RANGE = KeyGroupRange.of(0, 3);

    @TempDir Path dir;

    @Test
    void aClosedLogOpensNoSegmentAndHandsOutNoHandle() throws Exception {
        SegmentedLog log = open();
        BatchLocation first = log.append(batch(1), Set.of());
        log.handle(first.segment());
        log.close();
        List<Path> afterClose = segmentFiles();
        assertThat(afterClose).hasSize(1);

        assertThatThrownBy(() -> log.append(batch(2), Set.of(first.segment())))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("is closed");
        assertThatThrownBy(() -> log.writeRun(batch(2)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("is closed");
        assertThatThrownBy(() -> log.handle(first.segment()))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining("is closed");
        assertThat(segmentFiles()).isEqualTo(afterClose);
    }

    private SegmentedLog open() throws IOException {
        org.apache.flink.core.fs.Path path = org.apache.flink.core.fs.Path.fromLocalFile(dir.toFile());
        return new SegmentedLog(
                FileSystem.getLocalFileSystem(),
                path,
                "kg-0-3",
                1 << 20,
                SyncMode.NONE,
                BatchCompression.LZ4,
                false,
                FilePermissions.of((short) 0700, (short) 0600));
    }

    private static BatchBuilder batch(long checkpointId) throws IOException {
        BatchBuilder batch = new BatchBuilder(checkpointId, RANGE, List.of("counts"));
        for (int kg = 0; kg <= 3; kg++) {
            byte[] key = ("key-" + kg).getBytes(StandardCharsets.UTF_8);
            byte[] value = {(byte) checkpointId};
            RecordFormat.write(batch, kg, checkpointId, 0, key, 0, key.length, value, 0, value.length);
        }
        return batch;
    }

    private List<Path> segmentFiles() throws IOException {
        try (Stream<Path> files = Files.list(dir)) {
            return files.filter(p -> p.toString().endsWith(".seg"))
                    .sorted()
                    .collect(Collectors.toList());
        }
    }
}
