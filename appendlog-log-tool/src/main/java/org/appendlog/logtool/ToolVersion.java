package org.appendlog.logtool;

import org.apache.flink.runtime.util.EnvironmentInformation;

import picocli.CommandLine.IVersionProvider;

import java.io.IOException;
import java.io.InputStream;
import java.util.Properties;

/** The tool's version (from the build) and the version of the Flink it runs on. */
final class ToolVersion implements IVersionProvider {

    @Override
    public String[] getVersion() throws IOException {
        Properties properties = new Properties();
        try (InputStream in = ToolVersion.class.getResourceAsStream("version.properties")) {
            properties.load(in);
        }
        return new String[] {
            "appendlog-log " + properties.getProperty("version"),
            "Flink " + EnvironmentInformation.getVersion()
        };
    }
}
