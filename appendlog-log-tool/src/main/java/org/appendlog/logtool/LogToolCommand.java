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

package org.appendlog.logtool;

import org.appendlog.statebackend.tool.LogTool;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.GlobalConfiguration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.plugin.PluginUtils;

import picocli.CommandLine;
import picocli.CommandLine.Command;
import picocli.CommandLine.Mixin;
import picocli.CommandLine.Model.CommandSpec;
import picocli.CommandLine.ParameterException;
import picocli.CommandLine.Spec;

import java.io.File;
import java.io.OutputStream;
import java.io.PrintStream;
import java.io.PrintWriter;
import java.nio.charset.StandardCharsets;
import java.util.concurrent.Callable;

/**
 * {@code appendlog-log}: the state log tool's command line, as Kafka has {@code kafka-dump-log}
 * and RocksDB {@code sst_dump}. Exit codes: {@value #OK} no problem, {@value #PROBLEMS} problems
 * found in the log, {@value #USAGE} usage error, {@value #FAILURE} the tool could not read the path
 * (missing, unreachable file system, I/O error).
 */
@Command(
        name = "appendlog-log",
        mixinStandardHelpOptions = true,
        exitCodeOnInvalidInput = LogToolCommand.USAGE,
        exitCodeOnExecutionException = LogToolCommand.FAILURE,
        versionProvider = ToolVersion.class,
        description = "Checks and describes the AppendLog state backend's log.",
        synopsisSubcommandLabel = "(verify | inspect)",
        exitCodeListHeading = "%nExit codes:%n",
        exitCodeList = {
            "0:no problem found",
            "1:problems found in the log (each printed with file and offset)",
            "2:usage error (unknown command or option, missing or malformed PATH, bad --conf-dir)",
            "3:tool failure (PATH missing, file system unreachable or not configured, I/O error)"
        })
public final class LogToolCommand implements Callable<Integer> {

    static final int OK = 0;
    static final int PROBLEMS = 1;
    static final int USAGE = 2;
    static final int FAILURE = 3;

    private final PrintStream out;
    private final PrintStream err;

    @Spec private CommandSpec spec;

    LogToolCommand(PrintStream out, PrintStream err) {
        this.out = out;
        this.err = err;
    }

    public static void main(String[] args) {
        System.exit(execute(System.out, System.err, args));
    }

    /** Runs the command line with {@code args}; returns the exit code. */
    static int execute(PrintStream out, PrintStream err, String... args) {
        return new CommandLine(new LogToolCommand(out, err))
                .setOut(new PrintWriter(out, true, StandardCharsets.UTF_8))
                .setErr(new PrintWriter(err, true, StandardCharsets.UTF_8))
                .execute(args);
    }

    /** Without a command: a usage error. */
    @Override
    public Integer call() {
        throw new ParameterException(spec.commandLine(), "Missing command: verify or inspect");
    }

    @Command(
            name = "verify",
            mixinStandardHelpOptions = true,
            exitCodeOnInvalidInput = USAGE,
            exitCodeOnExecutionException = FAILURE,
            description = {
                "Checks every batch at PATH: segment header, batch header and footer CRCs,"
                        + " key-group table, every key group's CRC, record counts.",
                "Prints each problem with its file and offset; exits 1 if there is any."
            })
    int verify(@Mixin ToolOptions options) {
        return run(false, options);
    }

    @Command(
            name = "inspect",
            mixinStandardHelpOptions = true,
            exitCodeOnInvalidInput = USAGE,
            exitCodeOnExecutionException = FAILURE,
            description = {
                "Checks as verify does and prints each segment and batch: offset, length,"
                        + " checkpoint ids, key groups, records, states; then live entries and"
                        + " the live ratio.",
                "Given a _metadata, also the files its append-log handles refer to."
            })
    int inspect(@Mixin ToolOptions options) {
        return run(true, options);
    }

    private int run(boolean inspect, ToolOptions options) {
        Configuration config = configuration(options.confDir());
        LogTool tool =
                new LogTool(options.json ? new PrintStream(OutputStream.nullOutputStream()) : out);
        int problems;
        try {
            FileSystem.initialize(config, PluginUtils.createPluginManagerFromRootFolder(config));
            problems = tool.run(inspect, options.path);
        } catch (Exception e) {
            err.println("appendlog-log: cannot read " + options.path + ": " + e);
            return FAILURE;
        }
        if (options.json) {
            out.println(ReportJson.write(inspect ? "inspect" : "verify", options.path, tool.report()));
        }
        return problems == 0 ? OK : PROBLEMS;
    }

    /** Flink's configuration in {@code confDir}; a directory without one is a usage error. */
    private Configuration configuration(File confDir) {
        if (confDir == null) {
            return new Configuration();
        }
        if (!confDir.isDirectory()) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--conf-dir (or FLINK_CONF_DIR) " + confDir + " is not a directory");
        }
        try {
            return GlobalConfiguration.loadConfiguration(confDir.getPath());
        } catch (IllegalConfigurationException e) {
            throw new ParameterException(
                    spec.commandLine(),
                    "--conf-dir (or FLINK_CONF_DIR) " + confDir + ": " + e.getMessage());
        }
    }
}
