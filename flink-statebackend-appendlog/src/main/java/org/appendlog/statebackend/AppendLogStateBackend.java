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
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.AbstractStateBackend;
import org.apache.flink.runtime.state.BackendBuildingException;
import org.apache.flink.runtime.state.ConfigurableStateBackend;
import org.apache.flink.runtime.state.DefaultOperatorStateBackendBuilder;
import org.apache.flink.runtime.state.OperatorStateBackend;
import org.apache.flink.runtime.state.metrics.LatencyTrackingStateConfig;

import java.io.IOException;
import java.time.Duration;

/**
 * Keyed state on the JVM heap, checkpointed incrementally to an indexed, append-only, segmented
 * log: every checkpoint appends only the entries changed since the previous one.
 *
 * <p>Select it with {@code state.backend.type:
 * org.appendlog.statebackend.AppendLogStateBackendFactory} or set it on the environment. Operator
 * (non-keyed) state uses Flink's default operator state backend.
 */
public class AppendLogStateBackend extends AbstractStateBackend
        implements ConfigurableStateBackend {

    private static final long serialVersionUID = 1L;

    /** Options set on this instance; they win over the cluster's and the job's configuration. */
    private final Configuration explicitOptions;

    private final AppendLogSettings settings;

    public AppendLogStateBackend() {
        this(new Configuration());
    }

    /** A backend whose log lives in {@code logDirectory} (a URI such as hdfs://nn/flink/log). */
    public AppendLogStateBackend(String logDirectory) {
        this(withLogDir(logDirectory));
    }

    private AppendLogStateBackend(Configuration explicitOptions) {
        this.explicitOptions = explicitOptions;
        this.settings = AppendLogSettings.fromConfig(explicitOptions);
    }

    private static Configuration withLogDir(String logDirectory) {
        Configuration c = new Configuration();
        c.set(AppendLogOptions.LOG_DIR, logDirectory);
        return c;
    }

    // Each setter returns a new backend with the option set; set here, an option wins over the
    // cluster's and the job's configuration. Invalid values fail at once, naming the option.

    /** {@link AppendLogOptions#DIRECTORY_PERMISSIONS}, in octal, such as {@code "700"}. */
    public AppendLogStateBackend withDirectoryPermissions(String mode) {
        return with(AppendLogOptions.DIRECTORY_PERMISSIONS, mode);
    }

    /** {@link AppendLogOptions#FILE_PERMISSIONS}, in octal, such as {@code "600"}. */
    public AppendLogStateBackend withFilePermissions(String mode) {
        return with(AppendLogOptions.FILE_PERMISSIONS, mode);
    }

    /** {@link AppendLogOptions#SEGMENT_SIZE}. */
    public AppendLogStateBackend withSegmentSize(MemorySize size) {
        return with(AppendLogOptions.SEGMENT_SIZE, size);
    }

    /** {@link AppendLogOptions#SEAL_EVERY_BATCH}. */
    public AppendLogStateBackend withSealEveryBatch(boolean seal) {
        return with(AppendLogOptions.SEAL_EVERY_BATCH, seal);
    }

    /** {@link AppendLogOptions#CHANGE_BUFFER_SIZE}. */
    public AppendLogStateBackend withChangeBufferSize(MemorySize size) {
        return with(AppendLogOptions.CHANGE_BUFFER_SIZE, size);
    }

    /** {@link AppendLogOptions#SYNC_MODE}. */
    public AppendLogStateBackend withSyncMode(SyncMode mode) {
        return with(AppendLogOptions.SYNC_MODE, mode);
    }

    /** {@link AppendLogOptions#COMPRESSION}. */
    public AppendLogStateBackend withCompression(BatchCompression compression) {
        return with(AppendLogOptions.COMPRESSION, compression);
    }

    /** {@link AppendLogOptions#FULL_CHECKPOINT_RATIO}. */
    public AppendLogStateBackend withFullCheckpointRatio(double ratio) {
        return with(AppendLogOptions.FULL_CHECKPOINT_RATIO, ratio);
    }

    /** {@link AppendLogOptions#RESTORE_PARALLELISM}. */
    public AppendLogStateBackend withRestoreParallelism(int threads) {
        return with(AppendLogOptions.RESTORE_PARALLELISM, threads);
    }

    /** {@link AppendLogOptions#COMPACTION_ENABLED}. */
    public AppendLogStateBackend withCompactionEnabled(boolean enabled) {
        return with(AppendLogOptions.COMPACTION_ENABLED, enabled);
    }

    /** {@link AppendLogOptions#COMPACTION_MIN_DIRTY_RATIO}. */
    public AppendLogStateBackend withCompactionMinDirtyRatio(double ratio) {
        return with(AppendLogOptions.COMPACTION_MIN_DIRTY_RATIO, ratio);
    }

    /** {@link AppendLogOptions#COMPACTION_MAX_SEGMENTS}. */
    public AppendLogStateBackend withCompactionMaxSegments(int segments) {
        return with(AppendLogOptions.COMPACTION_MAX_SEGMENTS, segments);
    }

    /** {@link AppendLogOptions#COMPACTION_MIN_LAG}. */
    public AppendLogStateBackend withCompactionMinLag(Duration lag) {
        return with(AppendLogOptions.COMPACTION_MIN_LAG, lag);
    }

    /** {@link AppendLogOptions#COMPACTION_IO_RATE_LIMIT}. */
    public AppendLogStateBackend withCompactionIoRateLimit(MemorySize bytesPerSecond) {
        return with(AppendLogOptions.COMPACTION_IO_RATE_LIMIT, bytesPerSecond);
    }

    /** {@link AppendLogOptions#COMPACTION_THREADS}. */
    public AppendLogStateBackend withCompactionThreads(int threads) {
        return with(AppendLogOptions.COMPACTION_THREADS, threads);
    }

    private <T> AppendLogStateBackend with(ConfigOption<T> option, T value) {
        Configuration c = new Configuration(explicitOptions);
        c.set(option, value);
        return new AppendLogStateBackend(c);
    }

    /**
     * Fills every option not set on this instance from {@code config}. Fails, naming the option,
     * when an option is invalid or no log directory can be derived.
     */
    @Override
    public AppendLogStateBackend configure(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        Configuration merged = Configuration.fromMap(config.toMap());
        merged.addAll(explicitOptions);
        AppendLogStateBackend configured = new AppendLogStateBackend(merged);
        configured.latencyTrackingConfigBuilder = latencyTrackingConfigBuilder.configure(config);
        configured.settings.logDirectory();
        return configured;
    }

    public AppendLogSettings getSettings() {
        return settings;
    }

    @Override
    public boolean supportsNoClaimRestoreMode() {
        return true;
    }

    @Override
    public boolean supportsSavepointFormat(
            org.apache.flink.core.execution.SavepointFormatType formatType) {
        return true;
    }

    @Override
    public <K> AbstractKeyedStateBackend<K> createKeyedStateBackend(
            KeyedStateBackendParameters<K> parameters) throws IOException {
        LatencyTrackingStateConfig latencyTracking =
                latencyTrackingConfigBuilder.setMetricGroup(parameters.getMetricGroup()).build();
        return new AppendLogKeyedStateBackendBuilder<>(
                        parameters,
                        settings,
                        latencyTracking,
                        getCompressionDecorator(parameters.getEnv().getExecutionConfig()))
                .build();
    }

    @Override
    public OperatorStateBackend createOperatorStateBackend(
            OperatorStateBackendParameters parameters) throws BackendBuildingException {
        return new DefaultOperatorStateBackendBuilder(
                        parameters.getEnv().getUserCodeClassLoader().asClassLoader(),
                        parameters.getEnv().getExecutionConfig(),
                        true,
                        parameters.getStateHandles(),
                        parameters.getCancelStreamRegistry())
                .build();
    }

    @Override
    public String toString() {
        return "AppendLogStateBackend{" + settings + "}";
    }
}
