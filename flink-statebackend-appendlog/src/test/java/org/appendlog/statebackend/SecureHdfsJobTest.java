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

package org.appendlog.statebackend;

import org.appendlog.statebackend.faults.ReliabilityLog;
import org.appendlog.statebackend.security.SecureHdfs;
import org.appendlog.statebackend.security.TestKdc;

import org.apache.flink.api.common.JobID;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.client.program.MiniClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.RestOptions;
import org.apache.flink.configuration.SecurityOptions;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.runtime.jobmaster.JobResult;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.security.SecurityConfiguration;
import org.apache.flink.runtime.security.SecurityUtils;
import org.apache.flink.runtime.state.IncrementalRemoteKeyedStateHandle;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.util.ExceptionUtils;

import org.apache.hadoop.fs.FileStatus;
import org.apache.hadoop.fs.permission.FsPermission;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.net.URI;
import java.nio.file.Path;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.RunnableFuture;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;
import static org.assertj.core.api.Assertions.catchThrowable;

/**
 * The append-log backend on HDFS with Kerberos on ({@link SecureHdfs}, a KDC of its own): the job
 * runs as {@code alice}, logged in from her keytab through Flink's security configuration
 * ({@code security.kerberos.login.keytab}, {@code security.kerberos.login.principal}) as Flink's
 * entry points log in, with the Hadoop client settings as {@code flink.hadoop.*} options. Alice's
 * job checkpoints, fails and restores to exact counts; {@code bob}, whom HDFS knows but who has no
 * rights on Alice's log directory, is refused with an error naming him and the directory, and
 * leaves nothing there: Alice's savepoint still restores exactly. A backend whose rights are
 * withdrawn while it runs fails its checkpoint naming the principal and the segment.
 */
@Tag("kerberos")
class SecureHdfsJobTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("hdfs-kerberos");
    private static final int PARALLELISM = 2;
    private static final CountingJob JOB = new CountingJob(40_000, 5_000);

    @RegisterExtension static final TestKdc KDC = new TestKdc();

    @TempDir static Path tmp;
    private static SecureHdfs hdfs;
    private static File aliceKeytab;
    private static File bobKeytab;
    private static MiniCluster cluster;
    private static ClusterClient<?> client;

    @BeforeAll
    static void start() throws Exception {
        hdfs = SecureHdfs.start(KDC, tmp.resolve("hdfs"));
        aliceKeytab = KDC.keytab("alice.keytab", "alice");
        bobKeytab = KDC.keytab("bob.keytab", "bob");
        // What an administrator gives each user: a home directory only they may enter.
        hdfs.asSuperuser(
                fs -> {
                    for (String user : new String[] {"alice", "bob"}) {
                        org.apache.hadoop.fs.Path home = new org.apache.hadoop.fs.Path("/user/" + user);
                        fs.mkdirs(home);
                        fs.setOwner(home, user, user);
                        fs.setPermission(home, new FsPermission((short) 0700));
                    }
                    return null;
                });
        logIn("alice");
        Configuration clusterConfig = securityConfig("alice");
        // Any free port: other builds on the machine may hold 8081.
        clusterConfig.set(RestOptions.BIND_PORT, "0");
        cluster =
                new MiniCluster(
                        new MiniClusterConfiguration.Builder()
                                .setConfiguration(clusterConfig)
                                .setNumTaskManagers(1)
                                .setNumSlotsPerTaskManager(4)
                                .build());
        cluster.start();
        client = new MiniClusterClient(new Configuration(), cluster);
    }

    @AfterAll
    static void stop() throws Exception {
        if (client != null) {
            client.close();
        }
        if (cluster != null) {
            cluster.close();
        }
        if (hdfs != null) {
            hdfs.close();
        }
    }

    /**
     * What a Flink process's configuration says to log in as {@code user}: the keytab and the
     * principal, and the Hadoop client settings of the secured cluster.
     */
    private static Configuration securityConfig(String user) {
        Configuration config = new Configuration();
        config.set(
                SecurityOptions.KERBEROS_LOGIN_KEYTAB,
                (user.equals("alice") ? aliceKeytab : bobKeytab).getPath());
        config.set(SecurityOptions.KERBEROS_LOGIN_PRINCIPAL, KDC.principal(user));
        config.set(SecurityOptions.KERBEROS_LOGIN_USETICKETCACHE, false);
        hdfs.clientOptions().forEach((key, value) -> config.setString("flink.hadoop." + key, value));
        return config;
    }

    /**
     * Logs this JVM in as {@code user}, as a JobManager or TaskManager does at start; the file
     * systems Flink caches are dropped so that the next ones act as {@code user}.
     */
    private static void logIn(String user) throws Exception {
        Configuration config = securityConfig(user);
        SecurityUtils.install(new SecurityConfiguration(config));
        FileSystem.initialize(config, null);
    }

    private static String home(String user) {
        return hdfs.root() + "/user/" + user;
    }

    private static Configuration jobConfig(String user, String run, String logDir) {
        return CountingJob.withAppendLog(
                CountingJob.jobConfig(home(user) + "/" + run + "/checkpoints"), logDir);
    }

    @Test
    void aJobCheckpointsFailsAndRestoresExactlyAsTheLoggedInPrincipal() throws Exception {
        logIn("alice");
        FailOnce.reset();
        EmittedCounts.take();
        long perSubtask = JOB.records() / PARALLELISM;
        String logDir = home("alice") + "/appendlog";
        JobID jobId =
                MiniClusterJobs.submit(
                        client,
                        JOB.failingWith(new FailOnce(perSubtask / 4, perSubtask / 10))
                                .jobGraph(
                                        CountingJob.withRestarts(jobConfig("alice", "failing", logDir)),
                                        PARALLELISM,
                                        SavepointRestoreSettings.none()));
        // The last status seen of each file: a segment is restricted right after its creation,
        // before its first byte, so a look in between sees the umask's mode on an empty file.
        Map<String, FileStatus> logFiles = new TreeMap<>();
        while (!client.getJobStatus(jobId).get().isGloballyTerminalState()) {
            for (FileStatus status : below("/user/alice/appendlog/" + jobId, true)) {
                logFiles.put(status.getPath().toString(), status);
            }
            Thread.sleep(100);
        }
        MiniClusterJobs.awaitSuccess(client, jobId);
        EmittedCounts emitted = EmittedCounts.take();

        assertThat(FailOnce.hasFailed()).as("the injected failure happened").isTrue();
        assertThat(emitted.attempts()).as("one failure, one restart").containsExactly(0, 1);
        assertThat(emitted.ofAttempt(1).startsPerKey().values().stream().mapToLong(Long::longValue).sum())
                .as("counts the restarted job restored from its checkpoint on HDFS")
                .isPositive();
        assertThat(emitted.maxPerKey()).as("final count of every key").isEqualTo(JOB.expectedCounts());
        assertThat(logFiles.values())
                .as("segments the job wrote while it ran")
                .isNotEmpty()
                .allSatisfy(
                        status -> {
                            assertThat(status.getOwner()).as(status.getPath().toString()).isEqualTo("alice");
                            assertThat(status.getPermission().toString())
                                    .as(status.getPath().toString())
                                    .isEqualTo("rw-------");
                        });
    }

    @Test
    void aPrincipalWithoutRightsOnTheLogDirectoryIsRefusedAndChangesNothing() throws Exception {
        logIn("alice");
        String logDir = home("alice") + "/shared-log";
        CountingJobRuns.Stopped stopped =
                CountingJobRuns.stopMidStream(
                        client,
                        JOB,
                        jobConfig("alice", "stopped", logDir),
                        PARALLELISM,
                        home("alice") + "/savepoints",
                        SavepointFormatType.NATIVE);
        List<String> before = pathsBelow("/user/alice/shared-log");
        assertThat(before).as("Alice's log directory").anyMatch(p -> p.contains(stopped.jobId.toString()));

        logIn("bob");
        JobID bobsJob =
                MiniClusterJobs.submit(
                        client,
                        JOB.jobGraph(
                                jobConfig("bob", "refused", logDir),
                                PARALLELISM,
                                SavepointRestoreSettings.none()));
        JobResult result =
                client.requestJobResult(bobsJob)
                        .get(MiniClusterJobs.TIMEOUT.toMillis(), TimeUnit.MILLISECONDS);
        assertThat(result.isSuccess()).as("Bob's job").isFalse();
        String failure =
                result.getSerializedThrowable()
                        .orElseThrow()
                        .getFullStringifiedStackTrace();
        String error =
                failure.lines()
                        .filter(line -> line.contains("Cannot create the state log directory"))
                        .findFirst()
                        .orElse(failure);
        assertThat(error)
                .as("the error Bob's job failed with")
                .contains(KDC.principal("bob"))
                .contains("/user/alice/shared-log/" + bobsJob)
                .contains("Permission denied");
        assertThat(pathsBelow("/user/alice/shared-log"))
                .as("Alice's log after Bob's attempt")
                .isEqualTo(before);

        logIn("alice");
        CountingJobRuns.resumeToEnd(
                client,
                JOB,
                jobConfig("alice", "resumed", logDir),
                PARALLELISM,
                SavepointRestoreSettings.forPath(stopped.savepoint));
        RELIABILITY.record(
                "bob@REALM starts a job whose log directory is in alice's home (drwx------)",
                "the job fails at startup: "
                        + error.trim().replaceFirst("^Caused by: ", "")
                        + "; alice's log is unchanged and her native savepoint restores to exact counts");
    }

    /**
     * Rights withdrawn from a running backend: the checkpoint that must create a segment fails
     * naming the principal and the segment, creates nothing, and the checkpoint before it restores
     * exactly.
     */
    @Test
    void aCheckpointAfterRightsWereWithdrawnFailsNamingThePrincipalAndTheSegment() throws Exception {
        logIn("alice");
        Configuration options = new Configuration();
        options.set(AppendLogOptions.LOG_DIR, home("alice") + "/withdrawn");
        // Every checkpoint creates a segment of its own.
        options.set(AppendLogOptions.SEAL_EVERY_BATCH, true);
        options.set(AppendLogOptions.COMPACTION_ENABLED, false);
        AppendLogStateBackend backend =
                new AppendLogStateBackend().configure(options, getClass().getClassLoader());
        IncrementalRemoteKeyedStateHandle first;
        Throwable thrown;
        List<String> before;
        List<String> after;
        try (BackendHarness harness = BackendHarness.open(backend, BackendHarness.newRegistry())) {
            for (int key = 0; key < 100; key++) {
                harness.put(key, key);
            }
            first = harness.checkpoint(1);
            before = pathsBelow("/user/alice/withdrawn");
            String segment = before.stream().filter(p -> p.endsWith(".seg")).findFirst().orElseThrow();
            org.apache.hadoop.fs.Path operatorDir = new org.apache.hadoop.fs.Path(segment).getParent();
            setMode(operatorDir, (short) 0500);
            for (int key = 0; key < 100; key++) {
                harness.put(key, 1000L + key);
            }
            RunnableFuture<SnapshotResult<KeyedStateHandle>> second = harness.snapshot(2);
            second.run();
            thrown = catchThrowable(second::get);
            after = pathsBelow("/user/alice/withdrawn");
            setMode(operatorDir, (short) 0700);
        }
        String error =
                ExceptionUtils.findThrowableWithMessage(thrown, "Cannot create state log segment")
                        .orElseThrow(() -> new AssertionError("checkpoint 2", thrown))
                        .getMessage();
        assertThat(error)
                .contains(KDC.principal("alice"))
                .contains("/user/alice/withdrawn/")
                .contains(".seg")
                .contains("Permission denied");
        assertThat(after).as("files after the failed checkpoint").isEqualTo(before);
        BackendHarness.assertRestores(backend, BackendHarness.newRegistry(), first, 100, key -> (long) key);
        RELIABILITY.record(
                "write permission on the operator's log directory withdrawn (r-x) before a checkpoint"
                        + " that creates a segment",
                "the checkpoint fails: "
                        + error
                        + "; no file is created and the checkpoint before it restores exactly");
    }

    private static void setMode(org.apache.hadoop.fs.Path path, short mode) throws Exception {
        hdfs.asSuperuser(
                fs -> {
                    fs.setPermission(path, new FsPermission(mode));
                    return null;
                });
    }

    /** The cluster is secured: a client that is not logged in through Kerberos gets nothing. */
    @Test
    void aClientWithoutKerberosCredentialsIsRefused() {
        UserGroupInformation mallory = UserGroupInformation.createRemoteUser("mallory");
        assertThatThrownBy(
                        () ->
                                mallory.doAs(
                                        (PrivilegedExceptionAction<FileStatus[]>)
                                                () -> {
                                                    try (org.apache.hadoop.fs.FileSystem fs =
                                                            org.apache.hadoop.fs.FileSystem.newInstance(
                                                                    URI.create(hdfs.root()),
                                                                    hdfs.clientConfiguration())) {
                                                        return fs.listStatus(
                                                                new org.apache.hadoop.fs.Path("/user"));
                                                    }
                                                }))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("Client cannot authenticate via:[TOKEN, KERBEROS]");
    }

    /** Every file and directory below {@code dir}, as the HDFS superuser sees them. */
    private static List<String> pathsBelow(String dir) throws Exception {
        List<String> paths = new ArrayList<>();
        for (FileStatus status : below(dir, false)) {
            paths.add(status.getPath().toUri().getPath() + (status.isDirectory() ? "/" : ""));
        }
        paths.sort(null);
        return paths;
    }

    /** What is below {@code dir}: its files, or with {@code filesOnly} false its directories too. */
    private static List<FileStatus> below(String dir, boolean filesOnly) throws Exception {
        return hdfs.asSuperuser(
                fs -> {
                    List<FileStatus> found = new ArrayList<>();
                    List<org.apache.hadoop.fs.Path> pending = new ArrayList<>();
                    pending.add(new org.apache.hadoop.fs.Path(dir));
                    while (!pending.isEmpty()) {
                        org.apache.hadoop.fs.Path next = pending.remove(pending.size() - 1);
                        if (!fs.exists(next)) {
                            continue;
                        }
                        for (FileStatus status : fs.listStatus(next)) {
                            if (status.isDirectory()) {
                                pending.add(status.getPath());
                            }
                            if (!filesOnly || status.isFile()) {
                                found.add(status);
                            }
                        }
                    }
                    return found;
                });
    }
}
