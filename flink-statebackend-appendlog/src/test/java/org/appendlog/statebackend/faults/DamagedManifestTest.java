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

package org.appendlog.statebackend.faults;

import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.faults.FaultHarness.Completed;

import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;
import org.apache.flink.runtime.state.filesystem.FileStateHandle;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

import java.io.RandomAccessFile;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.fail;

/**
 * The manifest holds the timers as they are restored: a bit flipped in a timer's timestamp must
 * fail the restore naming the manifest, not move the timer.
 */
class DamagedManifestTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("damaged-manifest");
    private static final TimerSerializer<Integer, VoidNamespace> TIMERS =
            new TimerSerializer<>(IntSerializer.INSTANCE, VoidNamespaceSerializer.INSTANCE);
    /** Bytes that occur nowhere else in the manifest. */
    private static final long TIMESTAMP = 0x0123_4567_89ABL;

    @TempDir Path dir;

    @Test
    void aFlippedTimerTimestampFailsTheRestoreNamingTheManifest() throws Exception {
        AppendLogStateBackend stateBackend = DamagedLogTest.backend(dir.resolve("log"), "64mb");
        String checkpointDir = dir.resolve("checkpoints").toUri().toString();
        Completed checkpoint;
        try (FaultHarness writer = FaultHarness.open(stateBackend, checkpointDir)) {
            writer.put(7, 70L);
            writer.backend
                    .create("timers", TIMERS)
                    .add(new TimerHeapInternalTimer<>(TIMESTAMP, 7, VoidNamespace.INSTANCE));
            checkpoint = writer.checkpoint(1);
        }
        Path manifest =
                Paths.get(((FileStateHandle) checkpoint.handle.getMetaDataStateHandle()).getFilePath().toUri());
        long at = onlyOccurrence(Files.readAllBytes(manifest), TIMESTAMP);
        try (RandomAccessFile file = new RandomAccessFile(manifest.toFile(), "rw")) {
            // The timestamp's lowest bit: the timer would fire a millisecond later.
            file.seek(at + 7);
            int b = file.read();
            file.seek(at + 7);
            file.write(b ^ 1);
        }

        FaultHarness restored;
        try {
            restored = FaultHarness.restore(stateBackend, checkpointDir, checkpoint);
        } catch (Exception e) {
            String messages = FaultHarness.messages(e);
            assertThat(messages)
                    .contains("Corrupt state log")
                    .contains(manifest.getFileName().toString())
                    .containsPattern("at offset \\d+")
                    .contains("CRC32C mismatch");
            RELIABILITY.record(
                    "a bit flipped in a timer's timestamp in the manifest (offset " + (at + 7) + ")",
                    "restore fails: " + messages.substring(messages.indexOf("Corrupt state log")).split(" <- ")[0]);
            return;
        }
        try (FaultHarness wrong = restored) {
            fail(
                    "restored from a damaged manifest: a timer at %d, written at %d",
                    wrong.backend.create("timers", TIMERS).peek().getTimestamp(),
                    TIMESTAMP);
        }
    }

    private static long onlyOccurrence(byte[] bytes, long value) {
        List<Integer> found = new ArrayList<>();
        for (int i = 0; i + 8 <= bytes.length; i++) {
            long read = 0;
            for (int j = 0; j < 8; j++) {
                read = (read << 8) | (bytes[i + j] & 0xFF);
            }
            if (read == value) {
                found.add(i);
            }
        }
        assertThat(found).as("places of the timestamp in the manifest").hasSize(1);
        return found.get(0);
    }
}
