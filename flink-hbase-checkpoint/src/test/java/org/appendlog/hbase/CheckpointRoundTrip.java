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

package org.appendlog.hbase;

import org.apache.flink.api.common.JobID;
import org.apache.flink.runtime.state.CheckpointMetadataOutputStream;
import org.apache.flink.runtime.state.CheckpointStateOutputStream;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.CompletedCheckpointStorageLocation;
import org.apache.flink.runtime.state.StreamStateHandle;

import java.io.IOException;
import java.io.InputStream;
import java.util.Arrays;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * One checkpoint through the storage API, as tasks and the job manager use it, in the caller's
 * Hadoop user: a state stream written and the metadata committed, the pointer resolved and both
 * read back byte for byte, then both discarded.
 */
final class CheckpointRoundTrip {

    private static final int METADATA_BYTES = 1_000;

    private CheckpointRoundTrip() {}

    /** Writes {@code state} (at least 1000 bytes; its start is the metadata) as checkpoint 1 of {@code job}. */
    static void run(HBaseCheckpointStorage storage, JobID job, byte[] state) throws Exception {
        CheckpointStorageAccess access = storage.createCheckpointStorage(job);
        access.initializeBaseLocationsForCheckpoint();
        CheckpointStorageLocation location = access.initializeLocationForCheckpoint(1);
        StreamStateHandle stream;
        try (CheckpointStateOutputStream out =
                location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE)) {
            out.write(state);
            stream = out.closeAndGetHandle();
        }
        String pointer;
        try (CheckpointMetadataOutputStream out = location.createMetadataOutputStream()) {
            out.write(state, 0, METADATA_BYTES);
            pointer = out.closeAndFinalizeCheckpoint().getExternalPointer();
        }
        CompletedCheckpointStorageLocation resolved = storage.resolveCheckpoint(pointer);
        assertThat(readAll(resolved.getMetadataHandle())).isEqualTo(Arrays.copyOf(state, METADATA_BYTES));
        assertThat(readAll(stream)).isEqualTo(state);
        stream.discardState();
        resolved.disposeStorageLocation();
    }

    private static byte[] readAll(StreamStateHandle handle) throws IOException {
        try (InputStream in = handle.openInputStream()) {
            return in.readAllBytes();
        }
    }
}
