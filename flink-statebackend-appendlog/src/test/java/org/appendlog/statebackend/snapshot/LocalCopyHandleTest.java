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

import org.apache.flink.core.fs.Path;
import org.apache.flink.runtime.state.CheckpointBoundKeyedStateHandle;
import org.apache.flink.runtime.state.IncrementalKeyedStateHandle.HandleAndLocalPath;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Files;
import java.util.List;
import java.util.UUID;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink discards a task's local state as it pleases: the handle must leave the log's files, and
 * Flink deletes the checkpoint's local directory itself.
 */
class LocalCopyHandleTest {

    @TempDir java.nio.file.Path dir;

    @Test
    void discardingTheHandleOrItsReboundCopyDeletesNoFile() throws Exception {
        java.nio.file.Path segment = Files.write(dir.resolve("kg-0-127-a-000001.seg"), new byte[64]);
        java.nio.file.Path manifest = Files.write(dir.resolve("manifest"), new byte[16]);
        LocalCopyHandle reference =
                new LocalCopyHandle(
                        UUID.randomUUID(),
                        KeyGroupRange.of(0, 127),
                        7,
                        List.of(HandleAndLocalPath.of(fileHandle(segment), "kg-0-127-a-000001.seg")),
                        List.of(),
                        fileHandle(manifest),
                        80,
                        dir.toFile());

        reference.discardState();
        CheckpointBoundKeyedStateHandle rebound = reference.rebound(9);
        rebound.discardState();

        assertThat(rebound).isInstanceOf(LocalCopyHandle.class);
        assertThat(rebound.getCheckpointId()).isEqualTo(9);
        assertThat(((LocalCopyHandle) rebound).copies()).isEqualTo(dir.toFile().getAbsoluteFile());
        assertThat(segment).exists();
        assertThat(manifest).exists();
    }

    private static FileStateHandle fileHandle(java.nio.file.Path file) throws Exception {
        return new FileStateHandle(new Path(file.toUri()), Files.size(file));
    }
}
