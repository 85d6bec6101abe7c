package org.appendlog.statebackend;

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

    public AppendLogStateBackend withSegmentSize(MemorySize size) {
        return withOption(c -> c.set(AppendLogOptions.SEGMENT_SIZE, size));
    }

    public AppendLogStateBackend withSyncMode(SyncMode mode) {
        return withOption(c -> c.set(AppendLogOptions.SYNC_MODE, mode));
    }

    public AppendLogStateBackend withRestoreParallelism(int threads) {
        return withOption(c -> c.set(AppendLogOptions.RESTORE_PARALLELISM, threads));
    }

    private AppendLogStateBackend withOption(java.util.function.Consumer<Configuration> setter) {
        Configuration c = new Configuration(explicitOptions);
        setter.accept(c);
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
