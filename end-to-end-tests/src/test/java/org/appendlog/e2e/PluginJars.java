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

package org.appendlog.e2e;

import java.io.IOException;
import java.nio.file.DirectoryStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.ArrayList;
import java.util.List;

/** The jars that {@code ./mvnw package} builds in the plugin modules' target directories. */
final class PluginJars {

    private PluginJars() {}

    static Path repo() throws IOException {
        return Paths.get(System.getProperty("e2e.repo.dir")).toRealPath();
    }

    /** The jar for Flink's lib/ of a module ({@code <module>-<version>-flink-lib.jar}). */
    static Path flinkLib(String module) throws IOException {
        return only(module, module + "-*-flink-lib.jar");
    }

    /** The stand-in for Flink's HBase SQL connector jar that {@code end-to-end-tests/hbase-sql-connector-stand-in} builds. */
    static Path hbaseSqlConnectorStandIn() throws IOException {
        return only(
                "end-to-end-tests/hbase-sql-connector-stand-in",
                "hbase-sql-connector-stand-in-*-flink-sql-connector-hbase-2.2.jar");
    }

    /** The plain jar of a module ({@code <module>-<version>.jar}). */
    static Path plain(String module) throws IOException {
        return only(module, module + "-*[0-9T].jar");
    }

    private static Path only(String module, String glob) throws IOException {
        Path target = repo().resolve(module).resolve("target");
        List<Path> found = new ArrayList<>();
        if (Files.isDirectory(target)) {
            try (DirectoryStream<Path> jars = Files.newDirectoryStream(target, glob)) {
                jars.forEach(found::add);
            }
        }
        if (found.size() != 1) {
            throw new IllegalStateException(
                    "Expected one " + glob + " in " + target + ", found " + found
                            + ": build the module first (./mvnw package -pl " + module + ")");
        }
        return found.get(0);
    }
}
