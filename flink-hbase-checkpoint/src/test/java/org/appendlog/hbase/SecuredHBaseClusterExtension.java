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

package org.appendlog.hbase;

import org.appendlog.statebackend.security.TestKdc;

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.hbase.HBaseTestingUtility;
import org.apache.hadoop.hbase.StartMiniClusterOption;
import org.apache.hadoop.hbase.TableName;
import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.security.User;
import org.apache.hadoop.hbase.security.access.AccessControlClient;
import org.apache.hadoop.hbase.security.access.AccessController;
import org.apache.hadoop.hbase.security.access.Permission;
import org.apache.hadoop.hbase.security.token.TokenProvider;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import java.util.Map;

/**
 * A Kerberos KDC ({@link TestKdc}) and an HBase mini cluster (ZooKeeper, master, one region
 * server) that authenticates clients by Kerberos or HBase delegation tokens and authorizes them
 * with HBase's {@code AccessController}, for one test class tagged {@code kerberos}.
 *
 * <p>Principals: {@code hbase/localhost} (the servers, HBase's superuser), {@code flink} (the
 * job's, with {@code RWC} on the {@code default} namespace), {@code carol} (rights on single
 * tables, given by {@link #grant}) and {@code bob} (no rights). The root
 * directory is on the local file system: HDFS security is not what these tests are about.
 *
 * <p>The servers log in from their keytab, which makes their principal the JVM's Hadoop login
 * user; they are started inside that user's {@code doAs}, so their threads keep it when a test
 * logs in as another user, as Flink's security module does.
 */
final class SecuredHBaseClusterExtension implements BeforeAllCallback, AfterAllCallback {

    static final String JOB_USER = "flink";
    static final String OTHER_USER = "bob";
    static final String TABLE_USER = "carol";
    private static final String SERVER = "hbase/localhost";

    private final TestKdc kdc = new TestKdc();
    private final Map<String, String> serverSettings;

    private HBaseTestingUtility utility;
    private UserGroupInformation superuser;
    private Connection superuserConnection;
    private File jobKeytab;
    private File otherKeytab;
    private File tableUserKeytab;
    private Path workDir;

    /** @param serverSettings further HBase settings of the master and region server */
    SecuredHBaseClusterExtension(Map<String, String> serverSettings) {
        this.serverSettings = serverSettings;
    }

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        kdc.beforeAll(context);
        workDir = Files.createTempDirectory("secured-hbase");
        File serverKeytab = kdc.keytab("hbase.keytab", SERVER);
        jobKeytab = kdc.keytab("flink.keytab", JOB_USER);
        otherKeytab = kdc.keytab("bob.keytab", OTHER_USER);
        tableUserKeytab = kdc.keytab("carol.keytab", TABLE_USER);

        utility = new HBaseTestingUtility();
        Configuration conf = utility.getConfiguration();
        clientSecurity(conf);
        conf.set("hbase.master.keytab.file", serverKeytab.getPath());
        conf.set("hbase.regionserver.keytab.file", serverKeytab.getPath());
        conf.set("hbase.security.authorization", "true");
        conf.set("hbase.coprocessor.master.classes", AccessController.class.getName());
        conf.set("hbase.coprocessor.regionserver.classes", AccessController.class.getName());
        // TokenProvider issues delegation tokens.
        conf.setStrings(
                "hbase.coprocessor.region.classes",
                TokenProvider.class.getName(),
                AccessController.class.getName());
        conf.set("hbase.rootdir", workDir.resolve("root").toUri().toString());
        conf.set("hbase.wal.provider", "filesystem");
        conf.setBoolean("hbase.unsafe.stream.capability.enforce", false);
        conf.setInt("hbase.master.wait.on.regionservers.timeout", 120_000);
        conf.setInt("hbase.master.wait.on.service.seconds", 120);
        conf.setInt("hbase.regionserver.handler.count", 10);
        conf.setInt("hbase.master.info.port", -1);
        conf.setInt("hbase.regionserver.info.port", -1);
        serverSettings.forEach(conf::set);

        UserGroupInformation.setConfiguration(conf);
        superuser =
                UserGroupInformation.loginUserFromKeytabAndReturnUGI(
                        kdc.principal(SERVER), serverKeytab.getPath());
        superuser.doAs(
                (PrivilegedExceptionAction<Void>)
                        () -> {
                            utility.startMiniZKCluster();
                            utility.startMiniHBaseCluster(
                                    StartMiniClusterOption.builder().numRegionServers(1).build());
                            return null;
                        });
        superuserConnection =
                ConnectionFactory.createConnection(conf, User.create(superuser));
        try {
            AccessControlClient.grant(
                    superuserConnection,
                    "default",
                    JOB_USER,
                    Permission.Action.READ,
                    Permission.Action.WRITE,
                    Permission.Action.CREATE);
        } catch (Throwable e) {
            throw new IOException("Could not grant " + JOB_USER + " its rights", e);
        }
    }

    /** Grants {@code user} {@code actions} on {@code table} (HBase's shell: {@code grant}). */
    void grant(String table, String user, Permission.Action... actions) throws IOException {
        try {
            AccessControlClient.grant(
                    superuserConnection, TableName.valueOf(table), user, null, null, actions);
        } catch (Throwable e) {
            throw new IOException("Could not grant " + user + " rights on " + table, e);
        }
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        try {
            if (superuserConnection != null) {
                superuserConnection.close();
            }
            if (utility != null) {
                superuser.doAs(
                        (PrivilegedExceptionAction<Void>)
                                () -> {
                                    utility.shutdownMiniCluster();
                                    return null;
                                });
            }
        } finally {
            kdc.afterAll(context);
            if (workDir != null) {
                org.apache.flink.util.FileUtils.deleteDirectory(workDir.toFile());
            }
        }
    }

    /** Settings every client and server of this cluster has: Kerberos and the servers' principal. */
    private void clientSecurity(Configuration conf) {
        conf.set("hadoop.security.authentication", "kerberos");
        conf.set("hbase.security.authentication", "kerberos");
        conf.set("hbase.master.kerberos.principal", kdc.principal(SERVER));
        conf.set("hbase.regionserver.kerberos.principal", kdc.principal(SERVER));
    }

    /**
     * Writes an {@code hbase-site.xml} for clients of this cluster: its ZooKeeper quorum, Kerberos,
     * the servers' principal, and {@code extra}. What the storage's {@code site-file} names.
     */
    String siteFile(String name, Map<String, String> extra) throws IOException {
        Configuration site = new Configuration(false);
        site.set("hbase.zookeeper.quorum", "localhost");
        site.setInt("hbase.zookeeper.property.clientPort", utility.getZkCluster().getClientPort());
        clientSecurity(site);
        extra.forEach(site::set);
        File file = workDir.resolve(name).toFile();
        try (OutputStream out = new FileOutputStream(file)) {
            site.writeXml(out);
        }
        return file.getPath();
    }

    /** A connection as HBase's superuser, to look at rows with no storage code and no rights check. */
    Connection superuserConnection() {
        return superuserConnection;
    }

    String principal(String user) {
        return kdc.principal(user);
    }

    File jobKeytab() {
        return jobKeytab;
    }

    /** A fresh Kerberos login of {@code flink}, {@code carol} or {@code bob}, without changing the JVM's login user. */
    UserGroupInformation login(String user) throws IOException {
        File keytab =
                JOB_USER.equals(user)
                        ? jobKeytab
                        : TABLE_USER.equals(user) ? tableUserKeytab : otherKeytab;
        return UserGroupInformation.loginUserFromKeytabAndReturnUGI(principal(user), keytab.getPath());
    }
}
