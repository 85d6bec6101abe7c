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
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.configuration.SecurityOptions;
import org.apache.flink.core.security.token.DelegationTokenProvider.ObtainedDelegationTokens;
import org.apache.flink.runtime.security.token.DefaultDelegationTokenManager;
import org.apache.flink.runtime.security.token.DelegationTokenContainer;
import org.apache.flink.runtime.security.token.DelegationTokenReceiverRepository;
import org.apache.flink.runtime.security.token.hadoop.HadoopDelegationTokenConverter;
import org.apache.flink.util.InstantiationUtil;
import org.apache.flink.util.concurrent.ScheduledExecutorServiceAdapter;

import org.apache.hadoop.hbase.security.token.AuthenticationTokenIdentifier;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.security.PrivilegedExceptionAction;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;
import java.util.concurrent.ScheduledExecutorService;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * HBase delegation tokens of {@link HBaseCheckpointTokenProvider} on a Kerberized HBase whose
 * tokens live 10 s: obtained with the keytab for the cluster of the storage's site file, they let
 * a user without Kerberos credentials (a task manager's) write, read and delete checkpoint rows;
 * Flink's token manager obtains the next one before a token expires, and checkpoints go on. The
 * site file closes idle RPC connections after 1 s, so that the storage's cached connection
 * authenticates anew, with whatever credentials its user holds then, many times per test.
 */
@Tag("kerberos")
class HBaseCheckpointTokenITCase {

    private static final long TOKEN_LIFETIME_MS = 10_000;

    @RegisterExtension
    static final SecuredHBaseClusterExtension HBASE =
            new SecuredHBaseClusterExtension(
                    Map.of("hbase.auth.token.max.lifetime", Long.toString(TOKEN_LIFETIME_MS)));

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("hbase-delegation-tokens");

    private static String siteFile;

    @BeforeAll
    static void writeSiteFile() throws IOException {
        siteFile =
                HBASE.siteFile(
                        "hbase-site.xml",
                        Map.of("hbase.ipc.client.connection.minIdleTimeBeforeClose", "1000"));
    }

    /** The job manager's configuration: the storage's options and Flink's Kerberos login. */
    private static Configuration flinkConfig(String table) {
        Configuration conf = new Configuration();
        conf.set(HBaseCheckpointStorageOptions.SITE_FILE, siteFile);
        conf.set(HBaseCheckpointStorageOptions.TABLE, table);
        conf.set(HBaseCheckpointStorageOptions.SALT_BUCKETS, 4);
        conf.set(HBaseCheckpointStorageOptions.INLINE_THRESHOLD, MemorySize.parse("0b"));
        conf.set(SecurityOptions.KERBEROS_LOGIN_KEYTAB, HBASE.jobKeytab().getPath());
        conf.set(SecurityOptions.KERBEROS_LOGIN_PRINCIPAL, HBASE.principal(SecuredHBaseClusterExtension.JOB_USER));
        conf.set(SecurityOptions.KERBEROS_LOGIN_USETICKETCACHE, false);
        // Only this plugin's provider: the file systems are local, no hbase-site.xml is on the classpath.
        conf.setString("security.delegation.token.provider.hadoopfs.enabled", "false");
        conf.setString("security.delegation.token.provider.hbase.enabled", "false");
        return conf;
    }

    @Test
    void tokenObtainedWithTheKeytabServesAUserWithoutKerberosCredentials() throws Exception {
        Configuration conf = flinkConfig("token_checkpoints");
        HBaseCheckpointTokenProvider provider = new HBaseCheckpointTokenProvider();
        provider.init(conf);
        assertThat(provider.delegationTokensRequired()).isTrue();

        long before = System.currentTimeMillis();
        ObtainedDelegationTokens obtained = provider.obtainDelegationTokens();
        long after = System.currentTimeMillis();
        assertThat(obtained.getValidUntil())
                .as("the token's expiry, the cluster's hbase.auth.token.max.lifetime from now")
                .hasValueSatisfying(
                        validUntil -> assertThat(validUntil).isBetween(before + TOKEN_LIFETIME_MS, after + TOKEN_LIFETIME_MS));

        UserGroupInformation task = UserGroupInformation.createRemoteUser("taskmanager");
        receive(task, obtained.getTokens());
        assertThat(task.hasKerberosCredentials()).isFalse();
        assertThat(hbaseTokens(task)).hasSize(1);
        checkpointRoundTrip(task, HBaseCheckpointStorage.fromConfig(conf), new Random(1));

        UserGroupInformation withoutToken = UserGroupInformation.createRemoteUser("taskmanager-without-token");
        assertThatThrownBy(() -> checkpointRoundTrip(withoutToken, HBaseCheckpointStorage.fromConfig(conf), new Random(2)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("taskmanager-without-token")
                .hasMessageContaining("token_checkpoints")
                .satisfies(e -> RELIABILITY.record("user with neither Kerberos credentials nor a token", clean(e)));
        RELIABILITY.record(
                "token obtained with the keytab, used by a user without Kerberos credentials",
                "checkpoint written, committed, read back and deleted");
    }

    /**
     * Flink's own token manager runs the provider and hands each token to the receiver in a
     * task manager's user; checkpoints go on every 300 ms until the first token has long expired
     * and two more were obtained. A user that kept only the first token can no longer connect;
     * the task manager's user still can, on a connection opened after that expiry.
     */
    @Test
    void flinksTokenManagerReplacesTokensBeforeTheyExpireAndCheckpointsGoOn() throws Exception {
        Configuration conf = flinkConfig("renewed_token_checkpoints");
        UserGroupInformation task = UserGroupInformation.createRemoteUser("taskmanager");
        DelegationTokenReceiverRepository receivers = new DelegationTokenReceiverRepository(conf, null);
        List<Token<?>> received = Collections.synchronizedList(new ArrayList<>());
        ScheduledExecutorService scheduler = Executors.newSingleThreadScheduledExecutor();
        ExecutorService io = Executors.newSingleThreadExecutor();
        DefaultDelegationTokenManager manager =
                new DefaultDelegationTokenManager(conf, null, new ScheduledExecutorServiceAdapter(scheduler), io);
        int checkpoints = 0;
        try {
            manager.start(
                    tokens -> {
                        task.doAs(
                                (PrivilegedExceptionAction<Void>)
                                        () -> {
                                            receivers.onNewTokensObtained(tokens);
                                            return null;
                                        });
                        DelegationTokenContainer container =
                                InstantiationUtil.deserializeObject(tokens, getClass().getClassLoader());
                        byte[] ours = container.getTokens().get(HBaseCheckpointTokenProvider.SERVICE_NAME);
                        received.addAll(hbaseTokens(HadoopDelegationTokenConverter.deserialize(ours).getAllTokens()));
                    });
            assertThat(received).hasSize(1);
            long firstExpiry = expiry(received.get(0));
            HBaseCheckpointStorage storage = HBaseCheckpointStorage.fromConfig(conf);
            Random random = new Random(3);
            while (System.currentTimeMillis() < firstExpiry + 2_000 || received.size() < 3) {
                checkpointRoundTrip(task, storage, random);
                checkpoints++;
                Thread.sleep(300);
            }
        } finally {
            manager.stop();
            scheduler.shutdownNow();
            io.shutdownNow();
        }
        List<Long> expiries = new ArrayList<>();
        for (Token<?> token : received) {
            expiries.add(expiry(token));
        }
        assertThat(expiries).as("expiry of each token received").hasSizeGreaterThanOrEqualTo(3).isSorted().doesNotHaveDuplicates();
        assertThat(hbaseTokens(task)).as("the task manager's user holds the newest token only").hasSize(1);

        UserGroupInformation firstTokenOnly = UserGroupInformation.createRemoteUser("taskmanager-with-expired-token");
        firstTokenOnly.addToken(received.get(0));
        Configuration other = flinkConfig("renewed_token_checkpoints");
        other.set(HBaseCheckpointStorageOptions.CLIENT_RETRIES, 1);
        other.set(HBaseCheckpointStorageOptions.CLIENT_TIMEOUT, java.time.Duration.ofSeconds(10));
        assertThatThrownBy(() -> checkpointRoundTrip(firstTokenOnly, HBaseCheckpointStorage.fromConfig(other), new Random(4)))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("taskmanager-with-expired-token")
                .satisfies(e -> RELIABILITY.record("user holding only an expired token", clean(e)));
        // Other settings: a connection of its own, opened after the first token expired.
        checkpointRoundTrip(task, HBaseCheckpointStorage.fromConfig(other), new Random(5));
        RELIABILITY.record(
                "tokens of " + TOKEN_LIFETIME_MS / 1000 + " s, replaced by Flink's token manager",
                checkpoints
                        + " checkpoints written, read and deleted by a user with tokens only while "
                        + received.size()
                        + " tokens were received; none failed");
    }

    /**
     * A keytab login's cached connection authenticates again after the login was renewed (its
     * ticket destroyed and obtained anew) once its idle RPC connections were closed.
     */
    @Test
    void cachedConnectionWorksAfterAKeytabRelogin() throws Exception {
        UserGroupInformation flink = HBASE.login(SecuredHBaseClusterExtension.JOB_USER);
        HBaseCheckpointStorage storage = HBaseCheckpointStorage.fromConfig(flinkConfig("relogin_checkpoints"));
        checkpointRoundTrip(flink, storage, new Random(6));
        flink.forceReloginFromKeytab();
        Thread.sleep(3_000);
        checkpointRoundTrip(flink, storage, new Random(7));
        RELIABILITY.record("keytab relogin", "the cached connection wrote, read and deleted a checkpoint afterwards");
    }

    /** As {@code user}: {@link CheckpointRoundTrip}, then no row of the checkpoint is left. */
    private static void checkpointRoundTrip(UserGroupInformation user, HBaseCheckpointStorage storage, Random random)
            throws Exception {
        byte[] state = new byte[20_000];
        random.nextBytes(state);
        JobID job = new JobID();
        user.doAs(
                (PrivilegedExceptionAction<Void>)
                        () -> {
                            CheckpointRoundTrip.run(storage, job, state);
                            return null;
                        });
        assertThat(TableRows.rowsContaining(HBASE.superuserConnection(), storage.getTable(), job.toString()))
                .as("rows of checkpoint 1 of job %s after its discard", job)
                .isEmpty();
    }

    private static void receive(UserGroupInformation user, byte[] tokens) throws Exception {
        HBaseCheckpointTokenReceiver receiver = new HBaseCheckpointTokenReceiver();
        receiver.init(new Configuration());
        user.doAs(
                (PrivilegedExceptionAction<Void>)
                        () -> {
                            receiver.onNewTokensObtained(tokens);
                            return null;
                        });
    }

    private static List<Token<?>> hbaseTokens(UserGroupInformation user) {
        return hbaseTokens(user.getCredentials().getAllTokens());
    }

    private static List<Token<?>> hbaseTokens(java.util.Collection<Token<? extends org.apache.hadoop.security.token.TokenIdentifier>> tokens) {
        List<Token<?>> hbase = new ArrayList<>();
        for (Token<?> token : tokens) {
            if (token.getKind().equals(AuthenticationTokenIdentifier.AUTH_TOKEN_TYPE)) {
                hbase.add(token);
            }
        }
        return hbase;
    }

    @SuppressWarnings("unchecked")
    private static long expiry(Token<?> token) throws IOException {
        return HBaseCheckpointTokenProvider.expiration((Token<AuthenticationTokenIdentifier>) token);
    }

    private static String clean(Throwable e) {
        return e.getMessage().replace(siteFile, "hbase-site.xml");
    }
}
