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

package org.appendlog.testing;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.CoreOptions;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.plugin.DefaultPluginManager;
import org.apache.flink.core.plugin.DirectoryBasedPluginFinder;
import org.apache.flink.core.plugin.PluginManager;

import java.io.IOException;
import java.net.InetSocketAddress;
import java.net.ServerSocket;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A real S3 API for tests: s3proxy, run as a process of its own ({@code java -jar}) over its
 * {@code filesystem} blob store, in which object {@code key} of bucket {@code b} is the file
 * {@code <blobs>/b/key}; and Flink's own S3 file system ({@code flink-s3-fs-hadoop}) loaded as a
 * plugin, as a TaskManager loads it: it bundles Hadoop, Guava and Jackson unrelocated. The build
 * copies both jars into {@code target/} (the module's pom). Shared with the other modules' tests
 * through this module's test jar.
 */
public final class S3Server implements AutoCloseable {

    public static final String BUCKET = "appendlog";
    private static final String ACCESS_KEY = "appendlog-access";
    private static final String SECRET_KEY = "appendlog-secret";

    private final Process process;
    private final Path blobs;
    private final int port;

    private S3Server(Process process, Path blobs, int port) {
        this.process = process;
        this.blobs = blobs;
        this.port = port;
    }

    /** Starts s3proxy from {@code jar} with its blob store and log below {@code dir}. */
    public static S3Server start(Path jar, Path dir) throws Exception {
        Path blobs = Files.createDirectories(dir.resolve("blobs"));
        Files.createDirectories(blobs.resolve(BUCKET));
        int port = freePort();
        Path properties = dir.resolve("s3proxy.properties");
        Files.write(
                properties,
                List.of(
                        "s3proxy.endpoint=http://127.0.0.1:" + port,
                        "s3proxy.authorization=aws-v2-or-v4",
                        "s3proxy.identity=" + ACCESS_KEY,
                        "s3proxy.credential=" + SECRET_KEY,
                        "jclouds.provider=filesystem",
                        "jclouds.filesystem.basedir=" + blobs),
                StandardCharsets.UTF_8);
        Path log = dir.resolve("s3proxy.log");
        Process process =
                new ProcessBuilder(
                                javaExecutable(),
                                "-Xmx256m",
                                "-jar",
                                jar.toString(),
                                "--properties",
                                properties.toString())
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        S3Server server = new S3Server(process, blobs, port);
        server.awaitListening(log);
        return server;
    }

    /** The jar the build copied, from the module's directory (where surefire runs). */
    public static Path s3proxyJar() {
        return Paths.get("target", "s3proxy", "s3proxy.jar").toAbsolutePath();
    }

    /** The plugins directory the build laid out, holding {@code s3-fs-hadoop/}. */
    public static Path pluginsDir() {
        return Paths.get("target", "flink-plugins").toAbsolutePath();
    }

    /** The options that point Flink's S3 file system at this server. */
    public Configuration flinkConfig() {
        Configuration config = new Configuration();
        config.setString("s3.endpoint", "http://127.0.0.1:" + port);
        config.setString("s3.path.style.access", "true");
        config.setString("s3.access-key", ACCESS_KEY);
        config.setString("s3.secret-key", SECRET_KEY);
        // The filesystem store answers S3A's deletes of directory markers only after 20 s.
        config.setString("s3.directory.marker.retention", "keep");
        return config;
    }

    /**
     * Makes {@code s3://} paths of this JVM go to this server through the S3 plugin; {@link
     * #unloadS3Plugin} undoes it.
     */
    public void loadS3Plugin() {
        loadS3Plugin(flinkConfig(), pluginsDir());
    }

    /** Initializes Flink's file systems with the plugins below {@code pluginsDir}. */
    public static void loadS3Plugin(Configuration config, Path pluginsDir) {
        try {
            PluginManager plugins =
                    new DefaultPluginManager(
                            new DirectoryBasedPluginFinder(pluginsDir).findPlugins(),
                            CoreOptions.getPluginParentFirstLoaderPatterns(config));
            FileSystem.initialize(config, plugins);
        } catch (IOException e) {
            throw new IllegalStateException("No Flink plugins in " + pluginsDir, e);
        }
    }

    /** Back to the file systems of the classpath, for the tests that run after. */
    public static void unloadS3Plugin() {
        FileSystem.initialize(new Configuration(), null);
    }

    /** {@code s3://<bucket>/<key>}. */
    public static String uri(String key) {
        return "s3://" + BUCKET + "/" + key;
    }

    /** The blob store's file of the object at {@code s3Path} (an {@code s3://bucket/key} path). */
    public Path objectFile(org.apache.flink.core.fs.Path s3Path) {
        java.net.URI uri = s3Path.toUri();
        return blobs.resolve(uri.getHost()).resolve(uri.getPath().substring(1));
    }

    /** The blob store's files of the objects below {@code key} of the bucket. */
    public Path bucketDir(String key) {
        return blobs.resolve(BUCKET).resolve(key);
    }

    private void awaitListening(Path log) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (true) {
            try (Socket socket = new Socket()) {
                socket.connect(new InetSocketAddress("127.0.0.1", port), 1000);
                return;
            } catch (IOException notYet) {
                if (!process.isAlive() || System.nanoTime() > deadline) {
                    close();
                    throw new IllegalStateException(
                            "s3proxy did not start on port "
                                    + port
                                    + ": "
                                    + new String(Files.readAllBytes(log), StandardCharsets.UTF_8));
                }
                Thread.sleep(100);
            }
        }
    }

    private static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }

    /** The java launcher of this JVM, for child processes. */
    public static String javaExecutable() {
        return Paths.get(System.getProperty("java.home"), "bin", "java").toString();
    }

    @Override
    public void close() throws InterruptedException {
        process.destroy();
        if (!process.waitFor(10, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }
}
