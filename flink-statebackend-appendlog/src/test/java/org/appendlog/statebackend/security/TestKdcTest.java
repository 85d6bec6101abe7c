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

import org.apache.hadoop.conf.Configuration;
import org.apache.hadoop.security.UserGroupInformation;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.File;
import java.io.IOException;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The test KDC issues tickets for the principals of its keytabs, and only for those. */
@Tag("kerberos")
class TestKdcTest {

    @RegisterExtension static final TestKdc KDC = new TestKdc();

    @Test
    void logsInFromKeytab() throws Exception {
        File keytab = KDC.keytab("alice.keytab", "alice");
        UserGroupInformation.setConfiguration(kerberos());

        UserGroupInformation alice =
                UserGroupInformation.loginUserFromKeytabAndReturnUGI(
                        KDC.principal("alice"), keytab.getPath());

        assertThat(alice.getUserName()).isEqualTo(KDC.principal("alice"));
        assertThat(alice.getShortUserName()).isEqualTo("alice");
        assertThat(alice.getAuthenticationMethod())
                .isEqualTo(UserGroupInformation.AuthenticationMethod.KERBEROS);
        assertThat(alice.hasKerberosCredentials()).isTrue();
    }

    @Test
    void refusesPrincipalNotInKeytab() throws Exception {
        File keytab = KDC.keytab("bob.keytab", "bob");
        UserGroupInformation.setConfiguration(kerberos());

        assertThatThrownBy(
                        () ->
                                UserGroupInformation.loginUserFromKeytabAndReturnUGI(
                                        KDC.principal("mallory"), keytab.getPath()))
                .isInstanceOf(IOException.class)
                .hasMessageContaining(KDC.principal("mallory"));
    }

    private static Configuration kerberos() {
        Configuration conf = new Configuration();
        conf.set("hadoop.security.authentication", "kerberos");
        return conf;
    }
}
