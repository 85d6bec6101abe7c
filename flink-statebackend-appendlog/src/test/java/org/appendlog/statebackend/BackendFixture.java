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

import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SharedStateRegistry;
import org.apache.flink.util.FileUtils;

import org.junit.jupiter.api.extension.AfterEachCallback;
import org.junit.jupiter.api.extension.BeforeEachCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.Collections;
import java.util.List;
import java.util.function.IntFunction;
import java.util.stream.Collectors;
import java.util.stream.Stream;

/**
 * What a test that drives backends outside a job needs, fresh for each test: a log directory, a
 * {@link SharedStateRegistry} standing in for the JobManager's, and backends writing their log
 * there; the directory is deleted after the test. Register it with {@code @RegisterExtension}.
 */
public final class BackendFixture implements BeforeEachCallback, AfterEachCallback {

    private Path logDir;
    private SharedStateRegistry registry;

    @Override
    public void beforeEach(ExtensionContext context) throws IOException {
        logDir = Files.createTempDirectory("appendlog-log");
        registry = BackendHarness.newRegistry();
    }

    @Override
    public void afterEach(ExtensionContext context) throws Exception {
        registry.close();
        FileUtils.deleteDirectory(logDir.toFile());
    }

    public SharedStateRegistry registry() {
        return registry;
    }

    /** A backend with the default options, its log in the test's directory. */
    public AppendLogStateBackend backend() {
        return backend(new Configuration());
    }

    /** A backend with {@code options}, its log in the test's directory. */
    public AppendLogStateBackend backend(Configuration options) {
        Configuration config = new Configuration(options);
        config.set(AppendLogOptions.LOG_DIR, logDir.toUri().toString());
        return new AppendLogStateBackend().configure(config, getClass().getClassLoader());
    }

    /** A harness on an empty backend of {@code stateBackend}. */
    public BackendHarness open(AppendLogStateBackend stateBackend) throws Exception {
        return BackendHarness.open(stateBackend, registry);
    }

    /** A harness on an empty backend of {@code stateBackend}, its metrics on {@code metrics}. */
    public BackendHarness open(AppendLogStateBackend stateBackend, MetricGroup metrics)
            throws Exception {
        return BackendHarness.open(stateBackend, registry, metrics);
    }

    /** A harness on a backend of {@code stateBackend} restored from {@code handle}. */
    public BackendHarness restore(AppendLogStateBackend stateBackend, KeyedStateHandle handle)
            throws Exception {
        return BackendHarness.restore(stateBackend, registry, Collections.singletonList(handle));
    }

    /** {@link BackendHarness#assertRestores} with the test's registry. */
    public long assertRestores(
            AppendLogStateBackend stateBackend,
            IncrementalRemoteKeyedStateHandle handle,
            int keys,
            IntFunction<Long> expected)
            throws Exception {
        return BackendHarness.assertRestores(stateBackend, registry, handle, keys, expected);
    }

    /** The segment files in the log directory, sorted by path. */
    public List<Path> segmentFiles() throws IOException {
        try (Stream<Path> files = Files.walk(logDir)) {
            return files.filter(p -> p.toString().endsWith(".seg") && Files.isRegularFile(p))
                    .sorted()
                    .collect(Collectors.toList());
        }
    }

    /** The bytes of all segment files in the log directory. */
    public long segmentBytes() throws IOException {
        long bytes = 0;
        for (Path segment : segmentFiles()) {
            bytes += Files.size(segment);
        }
        return bytes;
    }
}
