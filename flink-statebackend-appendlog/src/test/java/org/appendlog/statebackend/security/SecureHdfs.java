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

package org.appendlog.statebackend.security;

import org.appendlog.testing.S3Server;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.fs.FileSystem;
import org.apache.hadoop.hdfs.HdfsConfiguration;
import org.apache.hadoop.hdfs.MiniDFSCluster;
import org.apache.hadoop.http.HttpConfig;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.ssl.KeyStoreTestUtil;

import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.lang.management.ManagementFactory;
import java.net.URI;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;

/**
 * HDFS with Kerberos authentication on: a NameNode and a DataNode ({@code MiniDFSCluster}) that
 * log in as {@code hdfs/localhost} from a keytab of a {@link TestKdc}, with SASL on the data
 * transfer ({@code dfs.data.transfer.protection=authentication}), block access tokens and HTTPS
 * only, as a secured production cluster runs.
 *
 * <p>The cluster runs in a JVM of its own: Hadoop's servers authenticate as the JVM's login user,
 * which a client logging in (as Flink's security modules do) replaces; in one JVM a job logging in
 * as {@code alice} would turn the NameNode into {@code alice}. Superuser operations (making the
 * directories users are given) run here as {@code hdfs} through {@link #asSuperuser}.
 */
public final class SecureHdfs implements AutoCloseable {

    /** The principal of the NameNode and DataNode, without realm; also the HDFS superuser. */
    public static final String SERVICE = "hdfs/localhost";

    private static final String READY = "namenode-port ";

    private final Process process;
    private final int port;
    private final Map<String, String> clientOptions;
    private final String superuser;
    private final File superuserKeytab;

    private SecureHdfs(
            Process process,
            int port,
            Map<String, String> clientOptions,
            String superuser,
            File superuserKeytab) {
        this.process = process;
        this.port = port;
        this.clientOptions = clientOptions;
        this.superuser = superuser;
        this.superuserKeytab = superuserKeytab;
    }

    /** Starts the cluster, its files below {@code dir}, and waits until it is up (2 minutes at most). */
    public static SecureHdfs start(TestKdc kdc, Path dir) throws Exception {
        File keytab = kdc.keytab("hdfs.keytab", SERVICE, "HTTP/localhost");
        Path sslConf = Files.createDirectories(dir.resolve("ssl"));
        Path log = dir.resolve("hdfs.log");
        List<String> command = new ArrayList<>();
        command.add(S3Server.javaExecutable());
        command.add("-Xmx1g");
        command.add("-Djava.security.krb5.conf=" + kdc.krb5Conf());
        // Hadoop reflects into the JDK as in this JVM: the same --add-opens/--add-exports.
        for (String option : ManagementFactory.getRuntimeMXBean().getInputArguments()) {
            if (option.startsWith("--add-")) {
                command.add(option);
            }
        }
        command.add("-cp");
        command.add(sslConf + File.pathSeparator + System.getProperty("java.class.path"));
        command.add(SecureHdfs.class.getName());
        command.add(dir.resolve("data").toString());
        command.add(sslConf.toString());
        command.add(keytab.getPath());
        command.add(kdc.principal(SERVICE));
        command.add(kdc.principal("HTTP/localhost"));
        Process process =
                new ProcessBuilder(command)
                        .redirectErrorStream(true)
                        .redirectOutput(log.toFile())
                        .start();
        int port = awaitPort(process, log);

        Map<String, String> client = new LinkedHashMap<>();
        client.put("hadoop.security.authentication", "kerberos");
        // As a cluster's hdfs-site.xml names it: Hadoop's client puts the NameNode's host for _HOST.
        client.put("dfs.namenode.kerberos.principal", kdc.principal("hdfs/_HOST"));
        client.put("dfs.data.transfer.protection", "authentication");
        return new SecureHdfs(process, port, client, kdc.principal(SERVICE), keytab);
    }

    private static int awaitPort(Process process, Path log) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.MINUTES.toNanos(2);
        while (System.nanoTime() < deadline) {
            if (Files.exists(log)) {
                for (String line : Files.readAllLines(log, StandardCharsets.UTF_8)) {
                    if (line.startsWith(READY)) {
                        return Integer.parseInt(line.substring(READY.length()).trim());
                    }
                }
            }
            if (!process.isAlive()) {
                throw new IOException(
                        "Secure HDFS exited with " + process.exitValue() + "; see " + log);
            }
            Thread.sleep(200);
        }
        process.destroyForcibly();
        throw new IOException("Secure HDFS did not start within 2 minutes; see " + log);
    }

    /** {@code hdfs://localhost:<port>}, to which paths are appended. */
    public String root() {
        return "hdfs://localhost:" + port;
    }

    /**
     * What a client needs besides {@code core-site.xml}'s defaults: Kerberos, the NameNode's
     * principal and SASL on the data transfer. Flink takes them as {@code flink.hadoop.<key>}.
     */
    public Map<String, String> clientOptions() {
        return clientOptions;
    }

    /** A Hadoop client configuration of this cluster. */
    public Configuration clientConfiguration() {
        Configuration conf = new Configuration();
        clientOptions.forEach(conf::set);
        return conf;
    }

    /** Runs {@code action} on a file system of this cluster logged in as the HDFS superuser. */
    public <T> T asSuperuser(FileSystemAction<T> action) throws Exception {
        Configuration conf = clientConfiguration();
        UserGroupInformation.setConfiguration(conf);
        UserGroupInformation hdfs =
                UserGroupInformation.loginUserFromKeytabAndReturnUGI(
                        superuser, superuserKeytab.getPath());
        return hdfs.doAs(
                (PrivilegedExceptionAction<T>)
                        () -> {
                            try (FileSystem fs = FileSystem.newInstance(URI.create(root()), conf)) {
                                return action.apply(fs);
                            }
                        });
    }

    /** What {@link #asSuperuser} runs. */
    @FunctionalInterface
    public interface FileSystemAction<T> {
        T apply(FileSystem fs) throws Exception;
    }

    @Override
    public void close() throws Exception {
        process.getOutputStream().close();
        if (!process.waitFor(60, TimeUnit.SECONDS)) {
            process.destroyForcibly().waitFor();
        }
    }

    /**
     * The cluster's JVM. Arguments: the data directory, the directory of {@code ssl-server.xml}
     * (on this JVM's classpath), the keytab, the HDFS principal and the HTTP principal. Prints
     * {@code namenode-port <port>} once up and stops when its standard input closes.
     */
    public static void main(String[] args) throws Exception {
        String keytab = args[2];
        Configuration conf = new HdfsConfiguration();
        conf.set(MiniDFSCluster.HDFS_MINIDFS_BASEDIR, args[0]);
        conf.set("hadoop.security.authentication", "kerberos");
        conf.set("hadoop.security.authorization", "true");
        conf.set("dfs.namenode.kerberos.principal", args[3]);
        conf.set("dfs.namenode.keytab.file", keytab);
        conf.set("dfs.datanode.kerberos.principal", args[3]);
        conf.set("dfs.datanode.keytab.file", keytab);
        conf.set("dfs.web.authentication.kerberos.principal", args[4]);
        conf.set("dfs.web.authentication.kerberos.keytab", keytab);
        conf.setBoolean("dfs.block.access.token.enable", true);
        conf.set("dfs.data.transfer.protection", "authentication");
        conf.set("dfs.http.policy", HttpConfig.Policy.HTTPS_ONLY.name());
        conf.set("dfs.namenode.https-address", "localhost:0");
        conf.set("dfs.datanode.https.address", "localhost:0");
        conf.setInt("ipc.client.connect.max.retries.on.sasl", 10);
        KeyStoreTestUtil.setupSSLConfig(args[1], args[1], conf, false);
        conf.set("dfs.client.https.keystore.resource", KeyStoreTestUtil.getClientSSLConfigFileName());
        conf.set("dfs.https.server.keystore.resource", KeyStoreTestUtil.getServerSSLConfigFileName());
        UserGroupInformation.setConfiguration(conf);

        MiniDFSCluster cluster = new MiniDFSCluster.Builder(conf).numDataNodes(1).build();
        cluster.waitActive();
        System.out.println(READY + cluster.getNameNodePort());
        System.out.flush();
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8))) {
            while (in.readLine() != null) {
                // Runs until the test closes this process's input.
            }
        }
        cluster.shutdown();
    }
}
