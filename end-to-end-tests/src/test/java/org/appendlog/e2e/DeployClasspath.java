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
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.concurrent.TimeUnit;

/**
 * A classpath that {@code deploy/} starts its processes with ({@code deploy/classpath/<name>}: {@code flink} is
 * Flink's distribution, {@code hadoop} the Hadoop client that {@code HADOOP_CLASSPATH} adds), resolved (and
 * cached) by {@code deploy/common.sh} under a work directory.
 */
final class DeployClasspath {

    private DeployClasspath() {}

    static String of(String name, Path work) throws IOException, InterruptedException {
        Files.createDirectories(work);
        Path out = work.resolve("classpath-" + name + ".out");
        Path err = work.resolve("classpath-" + name + ".err");
        ProcessBuilder resolve =
                new ProcessBuilder("bash", "-c", "source deploy/common.sh && classpath " + name)
                        .directory(PluginJars.repo().toFile())
                        .redirectError(err.toFile())
                        .redirectOutput(out.toFile());
        resolve.environment().put("APPENDLOG_DEPLOY_DIR", work.resolve("deploy").toString());
        Process process = resolve.start();
        if (!process.waitFor(5, TimeUnit.MINUTES)) {
            process.destroyForcibly();
            throw new IllegalStateException("Resolving the classpath " + name + " took over 5 minutes, see " + err);
        }
        if (process.exitValue() != 0) {
            throw new IllegalStateException("Could not resolve the classpath " + name + ": " + Files.readString(err));
        }
        return Files.readString(out).trim();
    }
}
