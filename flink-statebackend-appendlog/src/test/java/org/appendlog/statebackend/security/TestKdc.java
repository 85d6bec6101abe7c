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

import org.apache.flink.util.FileUtils;

import org.apache.hadoop.minikdc.MiniKdc;
import org.junit.jupiter.api.extension.AfterAllCallback;
import org.junit.jupiter.api.extension.BeforeAllCallback;
import org.junit.jupiter.api.extension.ExtensionContext;

import java.io.File;
import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A Kerberos KDC for one test class (Hadoop's {@code MiniKdc}, on a free localhost port, its
 * database and keytabs in a temporary directory), registered with {@code @RegisterExtension static}.
 *
 * <p>Starting it points {@code java.security.krb5.conf} of this JVM at its {@code krb5.conf};
 * Kerberos settings are JVM-global, so classes using it are tagged {@code kerberos} and run in
 * JVMs of their own (the module's {@code kerberos-tests} surefire execution). Shared with the other
 * modules' tests through this module's test jar.
 */
public final class TestKdc implements BeforeAllCallback, AfterAllCallback {

    private Path workDir;
    private MiniKdc kdc;

    @Override
    public void beforeAll(ExtensionContext context) throws Exception {
        workDir = Files.createTempDirectory("appendlog-kdc");
        kdc = new MiniKdc(MiniKdc.createConf(), workDir.toFile());
        kdc.start();
    }

    @Override
    public void afterAll(ExtensionContext context) throws Exception {
        if (kdc != null) {
            kdc.stop();
        }
        if (workDir != null) {
            FileUtils.deleteDirectory(workDir.toFile());
        }
    }

    /** The realm, e.g. {@code EXAMPLE.COM}. */
    public String realm() {
        return kdc.getRealm();
    }

    /** The {@code krb5.conf} a client of this KDC uses (what {@code java.security.krb5.conf} names). */
    public File krb5Conf() {
        return kdc.getKrb5conf();
    }

    /** {@code name} qualified with the realm: {@code hdfs/localhost} → {@code hdfs/localhost@REALM}. */
    public String principal(String name) {
        return name + "@" + realm();
    }

    /**
     * Creates the principals (names without realm, e.g. {@code hdfs/localhost}, {@code alice}),
     * with random keys, and writes their keys to a new keytab {@code <fileName>} in the KDC's
     * directory.
     */
    public File keytab(String fileName, String... principals) throws Exception {
        File keytab = workDir.resolve(fileName).toFile();
        kdc.createPrincipal(keytab, principals);
        return keytab;
    }
}
