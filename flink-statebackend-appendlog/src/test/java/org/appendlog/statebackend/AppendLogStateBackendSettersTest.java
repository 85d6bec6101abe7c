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

import org.appendlog.statebackend.log.BatchCompression;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.MemorySize;

import org.junit.jupiter.api.Test;

import java.lang.reflect.Field;
import java.lang.reflect.Modifier;
import java.time.Duration;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.Set;
import java.util.function.Function;
import java.util.function.UnaryOperator;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Every option of the backend can be set in code, and a value set in code wins over the cluster's
 * configuration, as with Flink's own backends.
 */
class AppendLogStateBackendSettersTest {

    /** A setter call with a non-default value, and where the settings show that value. */
    private static final class Setter {
        final UnaryOperator<AppendLogStateBackend> set;
        final Function<AppendLogSettings, Object> read;
        final Object expected;

        Setter(UnaryOperator<AppendLogStateBackend> set, Function<AppendLogSettings, Object> read, Object expected) {
            this.set = set;
            this.read = read;
            this.expected = expected;
        }
    }

    private static final Map<ConfigOption<?>, Setter> SETTERS = new LinkedHashMap<>();

    static {
        SETTERS.put(AppendLogOptions.LOG_DIR, new Setter(b -> b, s -> s.logDirectory().toString(), "file:/code/log"));
        SETTERS.put(
                AppendLogOptions.DIRECTORY_PERMISSIONS,
                new Setter(b -> b.withDirectoryPermissions("750"), s -> s.permissions().directoryMode(), (short) 0750));
        SETTERS.put(
                AppendLogOptions.FILE_PERMISSIONS,
                new Setter(b -> b.withFilePermissions("640"), s -> s.permissions().fileMode(), (short) 0640));
        SETTERS.put(
                AppendLogOptions.SEGMENT_SIZE,
                new Setter(b -> b.withSegmentSize(MemorySize.parse("3mb")), AppendLogSettings::segmentSize, 3L << 20));
        SETTERS.put(
                AppendLogOptions.SEAL_EVERY_BATCH,
                new Setter(b -> b.withSealEveryBatch(true), AppendLogSettings::sealEveryBatch, true));
        SETTERS.put(
                AppendLogOptions.CHANGE_BUFFER_SIZE,
                new Setter(
                        b -> b.withChangeBufferSize(MemorySize.parse("5mb")),
                        AppendLogSettings::changeBufferSize,
                        5L << 20));
        SETTERS.put(
                AppendLogOptions.SYNC_MODE,
                new Setter(b -> b.withSyncMode(SyncMode.HFLUSH), AppendLogSettings::syncMode, SyncMode.HFLUSH));
        SETTERS.put(
                AppendLogOptions.COMPRESSION,
                new Setter(
                        b -> b.withCompression(BatchCompression.NONE),
                        AppendLogSettings::compression,
                        BatchCompression.NONE));
        SETTERS.put(
                AppendLogOptions.FULL_CHECKPOINT_RATIO,
                new Setter(b -> b.withFullCheckpointRatio(3.5), AppendLogSettings::fullCheckpointRatio, 3.5));
        SETTERS.put(
                AppendLogOptions.RESTORE_PARALLELISM,
                new Setter(b -> b.withRestoreParallelism(5), AppendLogSettings::restoreParallelism, 5));
        SETTERS.put(
                AppendLogOptions.COMPACTION_ENABLED,
                new Setter(b -> b.withCompactionEnabled(false), s -> s.compaction().enabled(), false));
        SETTERS.put(
                AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO,
                new Setter(b -> b.withCompactionMinDirtyRatio(0.25), s -> s.compaction().minDirtyRatio(), 0.25));
        SETTERS.put(
                AppendLogOptions.COMPACTION_MAX_SEGMENTS,
                new Setter(b -> b.withCompactionMaxSegments(7), s -> s.compaction().maxSegments(), 7));
        SETTERS.put(
                AppendLogOptions.COMPACTION_MIN_LAG,
                new Setter(
                        b -> b.withCompactionMinLag(Duration.ofSeconds(42)),
                        s -> s.compaction().minLag(),
                        Duration.ofSeconds(42)));
        SETTERS.put(
                AppendLogOptions.COMPACTION_IO_RATE_LIMIT,
                new Setter(
                        b -> b.withCompactionIoRateLimit(MemorySize.parse("9mb")),
                        s -> s.compaction().ioRateLimit(),
                        9L << 20));
        SETTERS.put(
                AppendLogOptions.COMPACTION_THREADS,
                new Setter(b -> b.withCompactionThreads(3), s -> s.compaction().threads(), 3));
    }

    @Test
    void everyOptionHasASetter() throws IllegalAccessException {
        Set<ConfigOption<?>> options = new HashSet<>();
        for (Field field : AppendLogOptions.class.getFields()) {
            if (Modifier.isStatic(field.getModifiers()) && field.getType() == ConfigOption.class) {
                options.add((ConfigOption<?>) field.get(null));
            }
        }
        assertThat(SETTERS.keySet()).containsExactlyInAnyOrderElementsOf(options);
    }

    @Test
    void aValueSetInCodeWinsOverTheConfiguration() {
        Configuration cluster = new Configuration();
        cluster.setString(AppendLogOptions.LOG_DIR.key(), "file:///cluster/log");
        cluster.setString(AppendLogOptions.DIRECTORY_PERMISSIONS.key(), "755");
        cluster.setString(AppendLogOptions.FILE_PERMISSIONS.key(), "644");
        cluster.setString(AppendLogOptions.SEGMENT_SIZE.key(), "1mb");
        cluster.setString(AppendLogOptions.SEAL_EVERY_BATCH.key(), "false");
        cluster.setString(AppendLogOptions.CHANGE_BUFFER_SIZE.key(), "2mb");
        cluster.setString(AppendLogOptions.SYNC_MODE.key(), "none");
        cluster.setString(AppendLogOptions.COMPRESSION.key(), "lz4");
        cluster.setString(AppendLogOptions.FULL_CHECKPOINT_RATIO.key(), "1.5");
        cluster.setString(AppendLogOptions.RESTORE_PARALLELISM.key(), "1");
        cluster.setString(AppendLogOptions.COMPACTION_ENABLED.key(), "true");
        cluster.setString(AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO.key(), "0.75");
        cluster.setString(AppendLogOptions.COMPACTION_MAX_SEGMENTS.key(), "12");
        cluster.setString(AppendLogOptions.COMPACTION_MIN_LAG.key(), "1 s");
        cluster.setString(AppendLogOptions.COMPACTION_IO_RATE_LIMIT.key(), "1mb");
        cluster.setString(AppendLogOptions.COMPACTION_THREADS.key(), "2");

        AppendLogStateBackend backend = new AppendLogStateBackend("file:///code/log");
        for (Setter setter : SETTERS.values()) {
            backend = setter.set.apply(backend);
        }
        AppendLogSettings settings =
                backend.configure(cluster, getClass().getClassLoader()).getSettings();

        SETTERS.forEach(
                (option, setter) ->
                        assertThat(setter.read.apply(settings)).as(option.key()).isEqualTo(setter.expected));
    }

    @Test
    void anInvalidValueFailsAtTheSetterNamingTheOption() {
        assertThatThrownBy(() -> new AppendLogStateBackend("file:///code/log").withCompactionMinDirtyRatio(1.5))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO.key());
        assertThatThrownBy(() -> new AppendLogStateBackend("file:///code/log").withCompactionThreads(0))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(AppendLogOptions.COMPACTION_THREADS.key());
        assertThatThrownBy(() -> new AppendLogStateBackend("file:///code/log").withDirectoryPermissions("rwx"))
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(AppendLogOptions.DIRECTORY_PERMISSIONS.key());
    }
}
