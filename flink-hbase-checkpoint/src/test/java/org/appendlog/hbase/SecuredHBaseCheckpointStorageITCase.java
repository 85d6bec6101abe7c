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

import org.appendlog.hbase.faults.ReliabilityLog;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.JobStatus;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ExternalizedCheckpointRetention;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.SecurityOptions;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.configuration.StateRecoveryOptions;
import org.apache.flink.core.execution.JobClient;
import org.apache.flink.runtime.checkpoint.CompletedCheckpointStats;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.minicluster.MiniClusterConfiguration;
import org.apache.flink.runtime.security.SecurityConfiguration;
import org.apache.flink.runtime.security.SecurityUtils;
import org.apache.flink.runtime.testutils.CommonTestUtils;
import org.apache.flink.runtime.state.CheckpointMetadataOutputStream;
import org.apache.flink.runtime.state.CheckpointStorageAccess;
import org.apache.flink.runtime.state.CheckpointStorageLocation;
import org.apache.flink.runtime.state.CheckpointedStateScope;
import org.apache.flink.runtime.state.StreamStateHandle;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.util.TestStreamEnvironment;


import org.apache.hadoop.hbase.security.access.Permission;
import org.apache.hadoop.hbase.security.token.AuthenticationTokenIdentifier;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.io.InputStream;
import java.security.PrivilegedExceptionAction;
import java.time.Duration;
import java.util.Map;
import java.util.Random;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * The storage on an HBase cluster that authenticates by Kerberos and authorizes with its
 * AccessController: a Flink job logged in through Flink's security options writes, commits,
 * restores from an {@code hbase://} pointer and deletes; a principal without rights on the table,
 * or with {@code RW} only, fails naming itself and the table, and changes nothing; {@code RWC} on
 * the table is enough.
 */
@Tag("kerberos")
class SecuredHBaseCheckpointStorageITCase {

    @RegisterExtension
    static final SecuredHBaseClusterExtension HBASE = new SecuredHBaseClusterExtension(Map.of());

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("hbase-security");

    private static final String TABLE = "secured_checkpoints";

    private static String siteFile;

    @BeforeAll
    static void writeSiteFile() throws IOException {
        siteFile = HBASE.siteFile("hbase-site.xml", Map.of());
    }

    private static Configuration storageOptions() {
        Configuration conf = new Configuration();
        conf.set(CheckpointingOptions.CHECKPOINT_STORAGE, HBaseCheckpointStorageFactory.class.getName());
        conf.set(HBaseCheckpointStorageOptions.SITE_FILE, siteFile);
        conf.set(HBaseCheckpointStorageOptions.TABLE, TABLE);
        conf.set(HBaseCheckpointStorageOptions.SALT_BUCKETS, 4);
        conf.set(HBaseCheckpointStorageOptions.INLINE_THRESHOLD, MemorySize.parse("64b"));
        return conf;
    }

    private static HBaseCheckpointStorage storage() {
        return HBaseCheckpointStorage.fromConfig(storageOptions());
    }

    /**
     * A Flink cluster that logs in as {@code flink} from its keytab through Flink's security
     * options, as a standalone deployment does; its delegation token manager obtains an HBase
     * token through this plugin's provider, for the cluster of the storage's site file.
     */
    @Test
    void jobLoggedInThroughFlinkWritesCommitsRestoresAndDeletes() throws Exception {
        Configuration conf = storageOptions();
        conf.set(SecurityOptions.KERBEROS_LOGIN_KEYTAB, HBASE.jobKeytab().getPath());
        conf.set(SecurityOptions.KERBEROS_LOGIN_PRINCIPAL, HBASE.principal(SecuredHBaseClusterExtension.JOB_USER));
        conf.set(SecurityOptions.KERBEROS_LOGIN_USETICKETCACHE, false);
        conf.setString("flink.hadoop.hadoop.security.authentication", "kerberos");
        // The mini cluster's ZooKeeper takes no SASL; the file systems are local.
        conf.set(SecurityOptions.ZOOKEEPER_SASL_DISABLE, true);
        conf.setString("security.delegation.token.provider.hadoopfs.enabled", "false");
        conf.setString("security.delegation.token.provider.hbase.enabled", "false");
        SecurityUtils.install(new SecurityConfiguration(conf));
        UserGroupInformation login = UserGroupInformation.getLoginUser();
        assertThat(login.getUserName()).isEqualTo(HBASE.principal(SecuredHBaseClusterExtension.JOB_USER));

        SecurityUtils.getInstalledContext()
                .runSecured(
                        () -> {
                            try (MiniCluster flink =
                                    new MiniCluster(
                                            new MiniClusterConfiguration.Builder()
                                                    .setConfiguration(conf)
                                                    .setNumTaskManagers(1)
                                                    .setNumSlotsPerTaskManager(2)
                                                    .build())) {
                                flink.start();
                                assertThat(login.getCredentials().getAllTokens())
                                        .as("tokens the cluster's delegation token manager gave the login user")
                                        .extracting(token -> token.getKind())
                                        .containsExactly(AuthenticationTokenIdentifier.AUTH_TOKEN_TYPE);
                                TestStreamEnvironment.setAsContext(flink, 2);
                                try {
                                    retainRestoreAndDelete(flink, conf);
                                } finally {
                                    TestStreamEnvironment.unsetAsContext();
                                }
                            }
                            return null;
                        });
    }

    private static void retainRestoreAndDelete(MiniCluster flink, Configuration conf) throws Exception {
        long records = 4_000;
        CountingJob.reset();
        Configuration first = new Configuration(conf);
        first.set(StateBackendOptions.STATE_BACKEND, "hashmap");
        first.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(200));
        first.set(
                CheckpointingOptions.EXTERNALIZED_CHECKPOINT_RETENTION,
                ExternalizedCheckpointRetention.RETAIN_ON_CANCELLATION);
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(first);
        CountingJob.build(env, records, 1_000, 0);
        JobClient client = env.executeAsync("secured, to be cancelled");
        JobID job = client.getJobID();
        waitUntil(() -> CountingJob.RECORDS_COUNTED.get() > 500);
        long before = completedCheckpoints(flink, job);
        waitUntil(() -> completedCheckpoints(flink, job) >= before + 2);
        client.cancel().get();
        waitUntil(() -> client.getJobStatus().get() == JobStatus.CANCELED);
        CompletedCheckpointStats retained =
                flink.getExecutionGraph(job).get().getCheckpointStatsSnapshot().getHistory()
                        .getLatestCompletedCheckpoint();
        String pointer = retained.getExternalPath();
        String retainedRows = TableRows.directoryOf(pointer);
        // Subsumed checkpoints were deleted on the secured cluster; the retained one is there.
        waitUntil(
                () -> TableRows.rowsContaining(HBASE.superuserConnection(), TABLE, job.toString()).stream()
                        .allMatch(row -> row.contains(retainedRows)));
        assertThat(TableRows.rowsContaining(HBASE.superuserConnection(), TABLE, retainedRows)).isNotEmpty();

        CountingJob.reset();
        Configuration second = new Configuration(conf);
        second.set(StateBackendOptions.STATE_BACKEND, "hashmap");
        second.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(200));
        second.set(StateRecoveryOptions.SAVEPOINT_PATH, pointer);
        StreamExecutionEnvironment restored = StreamExecutionEnvironment.getExecutionEnvironment(second);
        CountingJob.build(restored, records, 2_000, 0);
        JobClient resumed = restored.executeAsync("secured, restored from " + pointer);
        resumed.getJobExecutionResult().get();
        assertThat(CountingJob.MAX_COUNT_PER_KEY).isEqualTo(CountingJob.expectedCounts(records));
        assertThat(CountingJob.RECORDS_COUNTED.get())
                .as("records counted after the restore")
                .isLessThan(records);
        waitUntil(
                () -> TableRows.rowsContaining(HBASE.superuserConnection(), TABLE, resumed.getJobID().toString())
                        .isEmpty());
        RELIABILITY.record(
                "Kerberos login through Flink's security options, HBase with AccessController",
                "job retained checkpoint "
                        + retained.getCheckpointId()
                        + ", restored from its hbase:// pointer with exact counts of "
                        + records
                        + " records; subsumed checkpoints and the finished job's rows deleted");
    }

    /**
     * {@code bob} has no rights on the table: writing a checkpoint, reading {@code flink}'s and
     * deleting its stream fail naming bob and the table; {@code flink}'s rows stay as they were
     * and no row of bob's job exists.
     */
    @Test
    void principalWithoutRightsFailsNamingItselfAndTheTableAndChangesNothing() throws Exception {
        UserGroupInformation flink = HBASE.login(SecuredHBaseClusterExtension.JOB_USER);
        byte[] state = new byte[10_000];
        new Random(7).nextBytes(state);
        JobID job = new JobID();
        StreamStateHandle[] stream = new StreamStateHandle[1];
        String pointer =
                flink.doAs(
                        (PrivilegedExceptionAction<String>)
                                () -> {
                                    CheckpointStorageAccess access = storage().createCheckpointStorage(job);
                                    access.initializeBaseLocationsForCheckpoint();
                                    CheckpointStorageLocation location = access.initializeLocationForCheckpoint(1);
                                    stream[0] = write(location, state);
                                    try (CheckpointMetadataOutputStream out = location.createMetadataOutputStream()) {
                                        out.write(state, 0, 100);
                                        return out.closeAndFinalizeCheckpoint().getExternalPointer();
                                    }
                                });
        Map<String, Long> rowsBefore = TableRows.streamBytes(HBASE.superuserConnection(), TABLE, job.toString());
        assertThat(rowsBefore).hasSize(2);

        UserGroupInformation bob = HBASE.login(SecuredHBaseClusterExtension.OTHER_USER);
        String principal = HBASE.principal(SecuredHBaseClusterExtension.OTHER_USER);
        JobID bobsJob = new JobID();
        bob.doAs(
                (PrivilegedExceptionAction<Void>)
                        () -> {
                            assertDenied(
                                    "principal without rights: write",
                                    () -> {
                                        CheckpointStorageAccess access = storage().createCheckpointStorage(bobsJob);
                                        access.initializeBaseLocationsForCheckpoint();
                                        write(access.initializeLocationForCheckpoint(1), state);
                                    },
                                    principal);
                            assertDenied("principal without rights: read", () -> storage().resolveCheckpoint(pointer), principal);
                            assertDenied("principal without rights: delete", stream[0]::discardState, principal);
                            return null;
                        });

        assertThat(TableRows.streamBytes(HBASE.superuserConnection(), TABLE, job.toString())).isEqualTo(rowsBefore);
        assertThat(TableRows.rowsContaining(HBASE.superuserConnection(), TABLE, bobsJob.toString())).isEmpty();
        byte[] readBack =
                flink.doAs(
                        (PrivilegedExceptionAction<byte[]>)
                                () -> {
                                    try (InputStream in = stream[0].openInputStream()) {
                                        return in.readAllBytes();
                                    }
                                });
        assertThat(readBack).isEqualTo(state);
    }

    /**
     * On a table that exists, {@code RW} is not enough: the storage reads the table's descriptor
     * (its salt bucket count), which HBase's AccessController gives only with {@code C} or {@code
     * A}. With {@code RWC} on the table, and nothing on the namespace, checkpoints work.
     */
    @Test
    void principalWithRwcOnTheTableAloneWritesReadsAndDeletes() throws Exception {
        String principal = HBASE.principal(SecuredHBaseClusterExtension.TABLE_USER);
        UserGroupInformation flink = HBASE.login(SecuredHBaseClusterExtension.JOB_USER);
        // The table exists: created by the job's principal.
        flink.doAs(
                (PrivilegedExceptionAction<Void>)
                        () -> {
                            roundTrip(new JobID());
                            return null;
                        });
        UserGroupInformation carol = HBASE.login(SecuredHBaseClusterExtension.TABLE_USER);
        HBASE.grant(TABLE, SecuredHBaseClusterExtension.TABLE_USER, Permission.Action.READ, Permission.Action.WRITE);
        carol.doAs(
                (PrivilegedExceptionAction<Void>)
                        () -> {
                            assertDenied("principal with RW on the existing table only: write", () -> roundTrip(new JobID()), principal);
                            return null;
                        });
        HBASE.grant(
                TABLE,
                SecuredHBaseClusterExtension.TABLE_USER,
                Permission.Action.READ,
                Permission.Action.WRITE,
                Permission.Action.CREATE);
        JobID job = new JobID();
        // Grants reach the region server through ZooKeeper, a moment later.
        waitUntil(
                () -> carol.doAs(
                        (PrivilegedExceptionAction<Boolean>)
                                () -> {
                                    try {
                                        roundTrip(job);
                                        return true;
                                    } catch (IOException e) {
                                        return false;
                                    }
                                }));
        assertThat(TableRows.rowsContaining(HBASE.superuserConnection(), TABLE, job.toString())).isEmpty();
        RELIABILITY.record(
                "principal with RWC on the existing table only",
                "checkpoint written, committed, read back and deleted");
    }

    private static void roundTrip(JobID job) throws Exception {
        byte[] state = new byte[5_000];
        new Random(job.getLowerPart()).nextBytes(state);
        CheckpointRoundTrip.run(storage(), job, state);
    }

    private static void assertDenied(String testCase, ThrowingCallable call, String principal) {
        assertThatThrownBy(call::call)
                .isInstanceOf(IOException.class)
                .hasMessageContaining(principal)
                .hasMessageContaining(TABLE)
                .satisfies(
                        e -> RELIABILITY.record(
                                testCase,
                                e.getMessage().replace(siteFile, "hbase-site.xml")));
    }

    /** A call that may throw anything; for {@link #assertDenied}. */
    private interface ThrowingCallable {
        void call() throws Exception;
    }

    private static StreamStateHandle write(CheckpointStorageLocation location, byte[] bytes) throws IOException {
        try (var out = location.createCheckpointStateOutputStream(CheckpointedStateScope.EXCLUSIVE)) {
            out.write(bytes);
            return out.closeAndGetHandle();
        }
    }

    private static long completedCheckpoints(MiniCluster cluster, JobID job) throws Exception {
        return cluster.getExecutionGraph(job).get().getCheckpointStatsSnapshot().getCounts()
                .getNumberOfCompletedCheckpoints();
    }

    /** Polls every 100 ms; fails after a minute instead of hanging the build. */
    private static void waitUntil(org.apache.flink.util.function.SupplierWithException<Boolean, Exception> condition)
            throws Exception {
        CommonTestUtils.waitUntilCondition(condition, 100L, 600);
    }
}
