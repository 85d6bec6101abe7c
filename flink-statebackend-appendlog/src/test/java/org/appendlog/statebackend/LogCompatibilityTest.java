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

package org.appendlog.statebackend;

import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;

import org.junit.jupiter.api.io.TempDir;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.ValueSource;

import java.io.IOException;
import java.net.URISyntaxException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.Collections;
import java.util.stream.Stream;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Logs that earlier versions wrote ({@link CompatibilityLog}, kept under {@code
 * compatibility/} in the test resources) restore with every value, and the restored backend
 * goes on checkpointing on them: an upgrade of the backend jar keeps a job's state.
 */
class LogCompatibilityTest {

    @TempDir Path tmp;

    @ParameterizedTest(name = "{0}")
    @ValueSource(
            strings = {
                "0.1-manifest-3-lz4",
                "0.1-format-3-lz4",
                "0.1-format-2-none",
                "0.1-format-4-lz4",
                "0.1-format-4-none"
            })
    void aLogAnEarlierVersionWroteRestoresAndGrows(String name) throws Exception {
        Path kept = copyOfKept(name);
        CompatibilityLog log = CompatibilityLog.read(kept);
        IncrementalRemoteKeyedStateHandle checkpoint = log.handle(kept);
        assertThat(log.segments).as("segments of the kept checkpoint").hasSizeGreaterThan(1);

        AppendLogStateBackend backend = CompatibilityLog.backend(tmp.resolve("log"), log.compression);
        SharedStateRegistry registry = BackendHarness.newRegistry();
        // As the JobManager does with the checkpoint it restores from.
        registry.registerAll(Collections.singletonList(checkpoint), checkpoint.getCheckpointId());
        long restoredBytes =
                BackendHarness.assertRestores(
                        backend, registry, checkpoint, CompatibilityLog.KEYS, CompatibilityLog::expected);
        assertThat(restoredBytes).as("bytes read from the kept log (%s)", log.writtenBy).isPositive();

        IncrementalRemoteKeyedStateHandle next;
        try (BackendHarness restored =
                BackendHarness.restore(backend, registry, Collections.singletonList(checkpoint))) {
            restored.put(7, 700);
            restored.remove(1_000);
            next = restored.checkpoint(checkpoint.getCheckpointId() + 1);
        }
        assertThat(next.getSharedState())
                .as("segments of the first checkpoint after the restore")
                .anyMatch(s -> log.segments.contains(s.getLocalPath()));
        BackendHarness.assertRestores(
                backend,
                registry,
                next,
                CompatibilityLog.KEYS,
                key -> key == 7 ? Long.valueOf(700) : key == 1_000 ? null : CompatibilityLog.expected(key));
    }

    /** The kept files, copied: a restore must not need to write next to them. */
    private Path copyOfKept(String name) throws IOException, URISyntaxException {
        Path source = Paths.get(getClass().getResource("/compatibility/" + name).toURI());
        Path copy = tmp.resolve(name);
        Files.createDirectories(copy);
        try (Stream<Path> files = Files.list(source)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                Files.copy(file, copy.resolve(file.getFileName()));
            }
        }
        return copy;
    }
}
