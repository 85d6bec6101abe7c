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

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.core.security.token.DelegationTokenProvider;
import org.apache.flink.runtime.security.token.hadoop.HadoopDelegationTokenConverter;
import org.apache.flink.runtime.security.token.hadoop.KerberosLoginProvider;

import org.apache.hadoop.hbase.client.Connection;
import org.apache.hadoop.hbase.client.ConnectionFactory;
import org.apache.hadoop.hbase.security.User;
import org.apache.hadoop.hbase.security.token.AuthenticationTokenIdentifier;
import org.apache.hadoop.hbase.security.token.ClientTokenUtil;
import org.apache.hadoop.security.Credentials;
import org.apache.hadoop.security.UserGroupInformation;
import org.apache.hadoop.security.token.Token;
import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.ByteArrayInputStream;
import java.io.DataInputStream;
import java.io.IOException;
import java.security.PrivilegedExceptionAction;
import java.time.Instant;
import java.util.Optional;

/**
 * Obtains HBase delegation tokens for the cluster that the HBase checkpoint storage options of the
 * Flink cluster's configuration name ({@link HBaseCheckpointStorageOptions#SITE_FILE}, {@link
 * HBaseCheckpointStorageOptions#ZOOKEEPER_QUORUM}), where Flink's own {@code hbase} provider
 * reads only the {@code hbase-site.xml} on the classpath. Flink runs it on the job manager with
 * the keytab or ticket cache of {@code security.kerberos.login.*} and hands the tokens to {@link
 * HBaseCheckpointTokenReceiver} in every task manager.
 *
 * <p>HBase tokens cannot be renewed; each expires after the cluster's {@code
 * hbase.auth.token.max.lifetime}. Their expiry is reported as the tokens' end of validity, so
 * Flink obtains new ones before it ({@code security.delegation.tokens.renewal.time-ratio}).
 */
public final class HBaseCheckpointTokenProvider implements DelegationTokenProvider {

    /**
     * Not {@code hbase}, Flink's provider for the classpath's cluster, nor {@code hbase-...}:
     * Flink warns of providers that share the part of the name before the first dash.
     */
    static final String SERVICE_NAME = "appendlog-hbase";

    private static final Logger LOG = LoggerFactory.getLogger(HBaseCheckpointTokenProvider.class);

    /** The storage's cluster, or null if the configuration names none. */
    @Nullable private HBaseClientSettings cluster;

    private KerberosLoginProvider login;

    @Override
    public String serviceName() {
        return SERVICE_NAME;
    }

    @Override
    public void init(Configuration configuration) {
        login = new KerberosLoginProvider(configuration);
        cluster = null;
        if (!configuration.contains(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM)
                && !configuration.contains(HBaseCheckpointStorageOptions.SITE_FILE)) {
            LOG.debug("No HBase checkpoint storage configured; no HBase tokens for it");
            return;
        }
        try {
            cluster = HBaseStorageSettings.fromConfig(configuration).client;
        } catch (IllegalConfigurationException e) {
            // A provider that fails its init fails every job of the cluster; the storage reports
            // the same error to the jobs that use it.
            LOG.warn("No HBase delegation tokens for the checkpoint storage: {}", e.getMessage());
        }
    }

    @Override
    public boolean delegationTokensRequired() throws IOException {
        if (cluster == null) {
            return false;
        }
        if (!UserGroupInformation.isSecurityEnabled()
                || !User.isHBaseSecurityEnabled(cluster.toHBaseConfiguration())) {
            LOG.debug("{} does not use Kerberos; no delegation tokens needed", cluster);
            return false;
        }
        if (!login.isLoginPossible(true)) {
            LOG.warn(
                    "{} uses Kerberos, but this process has no Kerberos login to obtain HBase"
                            + " delegation tokens with (security.kerberos.login.keytab and"
                            + " .principal, or security.kerberos.login.use-ticket-cache)",
                    cluster);
            return false;
        }
        return true;
    }

    @Override
    public ObtainedDelegationTokens obtainDelegationTokens() throws Exception {
        UserGroupInformation ugi = login.doLoginAndReturnUGI();
        Token<AuthenticationTokenIdentifier> token =
                ugi.doAs(
                        (PrivilegedExceptionAction<Token<AuthenticationTokenIdentifier>>)
                                () -> obtainToken(ugi));
        long validUntil = expiration(token);
        LOG.info(
                "Obtained an HBase delegation token of {} for {}, valid until {}",
                ugi.getUserName(),
                cluster,
                Instant.ofEpochMilli(validUntil));
        Credentials credentials = new Credentials();
        // The alias is the cluster id, as HBase's client selects the token by it: a newer token
        // of the cluster replaces the older one in the user's credentials.
        credentials.addToken(token.getService(), token);
        return new ObtainedDelegationTokens(
                HadoopDelegationTokenConverter.serialize(credentials), Optional.of(validUntil));
    }

    /** On a connection of its own: HBase issues tokens only to a Kerberos-authenticated caller. */
    private Token<AuthenticationTokenIdentifier> obtainToken(UserGroupInformation ugi)
            throws IOException {
        try (Connection connection =
                ConnectionFactory.createConnection(
                        cluster.toHBaseConfiguration(), User.create(ugi))) {
            return ClientTokenUtil.obtainToken(connection);
        } catch (IOException e) {
            throw new IOException(
                    "Could not obtain an HBase delegation token for "
                            + ugi.getUserName()
                            + " from "
                            + cluster
                            + ": "
                            + e.getMessage(),
                    e);
        }
    }

    /**
     * Read from the identifier's bytes: {@code Token#decodeIdentifier} finds identifier classes
     * through a JVM-wide service file that the flink-lib jar leaves out.
     */
    static long expiration(Token<AuthenticationTokenIdentifier> token) throws IOException {
        AuthenticationTokenIdentifier identifier = new AuthenticationTokenIdentifier();
        identifier.readFields(new DataInputStream(new ByteArrayInputStream(token.getIdentifier())));
        return identifier.getExpirationDate();
    }
}
