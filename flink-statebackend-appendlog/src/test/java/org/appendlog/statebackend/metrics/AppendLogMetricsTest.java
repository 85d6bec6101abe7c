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

package org.appendlog.statebackend.metrics;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.BackendFixture;
import org.appendlog.statebackend.BackendHarness;
import org.appendlog.testing.MetricsRecorder;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.runtime.checkpoint.CheckpointOptions;
import org.apache.flink.runtime.checkpoint.CheckpointType;
import org.apache.flink.runtime.state.CheckpointStorageLocationReference;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.memory.MemCheckpointStreamFactory;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import static org.assertj.core.api.Assertions.assertThat;

/** What the backend's metrics report, read as a metric reporter reads them. */
class AppendLogMetricsTest {

    @RegisterExtension final BackendFixture fixture = new BackendFixture();

    private final MetricsRecorder metrics = new MetricsRecorder();

    @Test
    void cumulativeFiguresAreCountersTheOthersGauges() throws Exception {
        try (BackendHarness harness = fixture.open(fixture.backend(), metrics)) {
            for (String counter :
                    List.of(
                            AppendLogMetrics.BYTES_APPENDED,
                            AppendLogMetrics.FULL_BATCHES,
                            AppendLogMetrics.UNTRACKED_INTERVALS,
                            AppendLogMetrics.COMPACTIONS_RUN,
                            AppendLogMetrics.COMPACTION_BYTES_READ,
                            AppendLogMetrics.COMPACTION_BYTES_WRITTEN,
                            AppendLogMetrics.COMPACTIONS_FAILED)) {
                assertThat(metrics.metric(counter)).as(counter).isInstanceOf(Counter.class);
            }
            for (String gauge :
                    List.of(
                            AppendLogMetrics.LIVE_BYTES,
                            AppendLogMetrics.LIVE_ENTRIES,
                            AppendLogMetrics.INDEX_HEAP_BYTES,
                            AppendLogMetrics.CHANGE_BUFFER_BYTES,
                            AppendLogMetrics.SEGMENT_COUNT,
                            AppendLogMetrics.COMPACTION_STOPPED)) {
                assertThat(metrics.metric(gauge)).as(gauge).isInstanceOf(Gauge.class);
            }
        }
    }

    @Test
    void figuresFollowTheStateAndTheFilesOnDisk() throws Exception {
        Configuration options = new Configuration();
        options.set(AppendLogOptions.COMPACTION_ENABLED, false);
        try (BackendHarness harness = fixture.open(fixture.backend(options), metrics)) {
            for (int key = 0; key < 1_000; key++) {
                harness.put(key, key);
            }
            assertThat(metrics.value(AppendLogMetrics.CHANGE_BUFFER_BYTES)).isPositive();
            harness.checkpoint(1);
            harness.index().awaitUpdates();
            long smallIndex = metrics.value(AppendLogMetrics.INDEX_HEAP_BYTES);
            assertThat(smallIndex).isPositive();
            for (int key = 0; key < 50_000; key++) {
                harness.put(key, key + 1);
            }
            harness.checkpoint(2);
            harness.index().awaitUpdates();

            assertThat(metrics.value(AppendLogMetrics.CHANGE_BUFFER_BYTES)).isZero();
            assertThat(metrics.value(AppendLogMetrics.BYTES_APPENDED))
                    .isEqualTo(fixture.segmentBytes());
            assertThat(metrics.value(AppendLogMetrics.SEGMENT_COUNT))
                    .isEqualTo(fixture.segmentFiles().size());
            assertThat(metrics.value(AppendLogMetrics.LIVE_ENTRIES)).isEqualTo(50_000);
            // At least a slot, the int of where its key is, a byte for each number of its place,
            // and its identity's bytes: its length, state id and 4-byte key.
            assertThat(metrics.value(AppendLogMetrics.INDEX_HEAP_BYTES))
                    .isGreaterThan(50_000L * (4 + 4 + 4 + 1 + 2 + 4))
                    .isGreaterThan(smallIndex);
        }
    }

    @Test
    void compactionStopsWhileTheIndexMissedAnUpdate() throws Exception {
        Configuration options = new Configuration();
        // Every batch closes its segment, so the next checkpoint writes a new file.
        options.set(AppendLogOptions.SEGMENT_SIZE, MemorySize.parse("1kb"));
        try (BackendHarness harness = fixture.open(fixture.backend(options), metrics)) {
            for (int key = 0; key < 1_000; key++) {
                harness.put(key, key);
            }
            IncrementalRemoteKeyedStateHandle first =
                    BackendHarness.written(
                            harness.backend.snapshot(
                                    1,
                                    1,
                                    new MemCheckpointStreamFactory(Integer.MAX_VALUE),
                                    new CheckpointOptions(
                                            CheckpointType.FULL_CHECKPOINT,
                                            CheckpointStorageLocationReference.getDefault())));
            assertThat(metrics.value(AppendLogMetrics.FULL_BATCHES)).isEqualTo(1);
            // The index learns a full batch by reading it back once it completed: here it is gone.
            for (Path segment : fixture.segmentFiles()) {
                Files.delete(segment);
            }
            harness.confirm(first, 1);
            awaitValue(AppendLogMetrics.COMPACTION_STOPPED, 1);

            harness.put(0, 7);
            harness.checkpoint(2);
            assertThat(metrics.value(AppendLogMetrics.FULL_BATCHES))
                    .as("the full checkpoint the backend asked for")
                    .isEqualTo(2);
            awaitValue(AppendLogMetrics.COMPACTION_STOPPED, 0);
        }
    }

    @Test
    void theReadmeListsEveryMetric() throws Exception {
        Set<String> names = new TreeSet<>();
        for (Field field : AppendLogMetrics.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers()) && !field.getName().equals("GROUP")) {
                names.add((String) field.get(null));
            }
        }
        // Surefire runs in the module's directory.
        Set<String> documented = new TreeSet<>();
        Matcher row =
                Pattern.compile("(?m)^\\| `(\\w+)` \\| (gauge|counter) \\|")
                        .matcher(Files.readString(Path.of("README.md")));
        while (row.find()) {
            documented.add(row.group(1));
        }
        assertThat(documented).isEqualTo(names);
    }

    private void awaitValue(String name, long expected) throws InterruptedException {
        long deadline = System.nanoTime() + Duration.ofSeconds(30).toNanos();
        while (metrics.value(name) != expected && System.nanoTime() < deadline) {
            Thread.sleep(10);
        }
        assertThat(metrics.value(name)).as(name).isEqualTo(expected);
    }
}
