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
import org.apache.flink.core.security.token.DelegationTokenProvider;
import org.apache.flink.core.security.token.DelegationTokenReceiver;

import org.junit.jupiter.api.Test;

import java.util.List;
import java.util.ServiceLoader;
import java.util.function.Function;
import java.util.stream.Collectors;
import java.util.stream.StreamSupport;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * When the provider obtains no tokens, without a Kerberos cluster: Flink fails every job of a
 * cluster whose provider fails, so a configuration without the storage, or with bad storage
 * options, must not. The Kerberos cases are in {@code HBaseCheckpointTokenITCase}.
 */
class HBaseCheckpointTokenProviderTest {

    @Test
    void providerAndReceiverAreServiceLoadedUnderOneNameThatIsNotFlinksHBaseProvidersName() {
        assertThat(names(DelegationTokenProvider.class, DelegationTokenProvider::serviceName))
                .contains("appendlog-hbase")
                .doesNotHaveDuplicates();
        assertThat(names(DelegationTokenReceiver.class, DelegationTokenReceiver::serviceName))
                .contains("appendlog-hbase")
                .doesNotHaveDuplicates();
        assertThat(HBaseCheckpointTokenProvider.SERVICE_NAME).doesNotStartWith("hbase");
    }

    @Test
    void noTokensWithoutTheStorageOptions() throws Exception {
        HBaseCheckpointTokenProvider provider = new HBaseCheckpointTokenProvider();
        provider.init(new Configuration());
        assertThat(provider.delegationTokensRequired()).isFalse();
    }

    @Test
    void badStorageOptionsLeaveTheProviderInitializedWithoutTokens() throws Exception {
        Configuration conf = new Configuration();
        conf.set(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, "zk1:2181");
        conf.set(HBaseCheckpointStorageOptions.SALT_BUCKETS, 0);
        HBaseCheckpointTokenProvider provider = new HBaseCheckpointTokenProvider();
        provider.init(conf);
        assertThat(provider.delegationTokensRequired()).isFalse();
    }

    @Test
    void noTokensForAnHBaseWithoutKerberos() throws Exception {
        Configuration conf = new Configuration();
        conf.set(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM, "zk1:2181");
        HBaseCheckpointTokenProvider provider = new HBaseCheckpointTokenProvider();
        provider.init(conf);
        assertThat(provider.delegationTokensRequired()).isFalse();
    }

    private static <T> List<String> names(Class<T> service, Function<T, String> name) {
        return StreamSupport.stream(ServiceLoader.load(service).spliterator(), false)
                .map(name)
                .collect(Collectors.toList());
    }
}
