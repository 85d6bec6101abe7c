package org.appendlog.statebackend;

import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.StateBackendFactory;

/**
 * Selected by {@code state.backend.type: org.appendlog.statebackend.AppendLogStateBackendFactory}.
 * Option errors surface here, at startup, naming the option.
 */
public class AppendLogStateBackendFactory implements StateBackendFactory<AppendLogStateBackend> {

    @Override
    public AppendLogStateBackend createFromConfig(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        return new AppendLogStateBackend().configure(config, classLoader);
    }
}
