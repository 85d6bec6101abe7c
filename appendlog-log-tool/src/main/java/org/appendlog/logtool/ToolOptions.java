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

import org.apache.flink.core.fs.Path;

import picocli.CommandLine.ITypeConverter;
import picocli.CommandLine.Option;
import picocli.CommandLine.Parameters;

import java.io.File;

/** What {@code verify} and {@code inspect} take. */
final class ToolOptions {

    @Parameters(
            paramLabel = "PATH",
            converter = FlinkPathConverter.class,
            description =
                    "A segment file, a directory (every .seg below it) or a checkpoint's _metadata,"
                            + " on any Flink file system (file://, hdfs://, s3://, hbase://, ...).")
    Path path;

    @Option(
            names = "--json",
            description = "Print one JSON document (segments, batches, problems, totals) instead of text.")
    boolean json;

    @Option(
            names = "--conf-dir",
            paramLabel = "DIR",
            defaultValue = "${env:FLINK_CONF_DIR}",
            description =
                    "Flink configuration directory whose file system settings apply"
                            + " (default: FLINK_CONF_DIR; if neither, Flink's defaults). Plugins are"
                            + " loaded from FLINK_PLUGINS_DIR (default: ./plugins).")
    private String confDir;

    File confDir() {
        return confDir == null || confDir.isEmpty() ? null : new File(confDir);
    }

    /** A Flink path, so that a malformed one is a usage error. */
    static final class FlinkPathConverter implements ITypeConverter<Path> {
        @Override
        public Path convert(String value) {
            return new Path(value);
        }
    }
}
