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

package org.appendlog.e2e;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.jar.JarEntry;
import java.util.jar.JarFile;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * The flink-lib jars hold nothing that can clash with Flink's lib/, Hadoop's classpath or another
 * connector's jar there: every class is the plugin's own or relocated under the plugin's shaded prefix
 * (and refers to no bundled library by its original name), but for the HBase classes that a region
 * server loads by the name the client sends (filters, comparators) or returns (the exceptions the
 * client retries after); and the only service files are the plugin's own (Flink factories) and
 * those of relocated interfaces, which nothing outside the jar loads. The licence and notice files are
 * in the jar.
 */
class PluginJarContentTest {

    /**
     * The exceptions a region server or master returns that the HBase client retries after (or reopens a
     * scanner), but {@code RegionMovedException}: it names relocated types, and Flink's HBase SQL connector
     * jar ships its own copy.
     */
    private static final String RETRIED_EXCEPTIONS =
            "org/apache/hadoop/hbase/exceptions/RegionOpeningException;"
                    + "org/apache/hadoop/hbase/RegionTooBusyException;org/apache/hadoop/hbase/CallQueueTooBigException;"
                    + "org/apache/hadoop/hbase/CallDroppedException;org/apache/hadoop/hbase/RetryImmediatelyException;"
                    + "org/apache/hadoop/hbase/MultiActionResultTooLarge;org/apache/hadoop/hbase/PleaseHoldException;"
                    + "org/apache/hadoop/hbase/ipc/ServerNotRunningYetException;"
                    + "org/apache/hadoop/hbase/regionserver/RegionServerStoppedException;"
                    + "org/apache/hadoop/hbase/regionserver/RegionServerAbortedException;"
                    + "org/apache/hadoop/hbase/quotas/RpcThrottlingException;org/apache/hadoop/hbase/UnknownScannerException;"
                    + "org/apache/hadoop/hbase/exceptions/ScannerResetException;"
                    + "org/apache/hadoop/hbase/exceptions/OutOfOrderScannerNextException;"
                    + "org/apache/hadoop/hbase/regionserver/LeaseException";

    @ParameterizedTest(name = "{0}")
    @CsvSource({
        "flink-hbase-checkpoint, org/appendlog/hbase/shaded/, org/apache/hadoop/hbase/;org/apache/hbase/thirdparty/;"
                + "org/apache/zookeeper/;com/google/protobuf/;org/apache/commons/crypto/;io/opentelemetry/;"
                + "com/codahale/metrics/, org/apache/hadoop/hbase/filter/;org/apache/hadoop/hbase/NotServingRegionException;"
                + RETRIED_EXCEPTIONS + ", org.apache.hbase:hbase-client",
        "flink-cec-operators, org/appendlog/cec/shaded/, org/apache/flink/connector/base/, '',"
                + " org.apache.flink:flink-connector-base"
    })
    void flinkLibJarHoldsOnlyThePluginAndRelocatedClasses(
            String module, String shadedPrefix, String bundledPackages, String namesOnTheWire, String listedInNotice)
            throws IOException {
        Path lib = PluginJars.flinkLib(module);
        Set<String> ownClasses = classes(PluginJars.plain(module));
        Map<String, String> ownServices = services(PluginJars.plain(module));
        List<String> originalNames = List.of(bundledPackages.split(";"));
        List<String> kept = namesOnTheWire.isEmpty() ? List.of() : List.of(namesOnTheWire.split(";"));

        List<String> misplaced = new ArrayList<>();
        List<String> unrelocatedReferences = new ArrayList<>();
        Set<String> libClasses = new TreeSet<>();
        try (JarFile jar = new JarFile(lib.toFile())) {
            for (JarEntry entry : Collections.list(jar.entries())) {
                String name = entry.getName();
                if (!name.endsWith(".class") || name.startsWith("META-INF/versions/")) {
                    continue;
                }
                libClasses.add(name);
                if (!ownClasses.contains(name) && !name.startsWith(shadedPrefix) && !startsWithAny(name, 0, kept)) {
                    misplaced.add(name);
                }
                String bytes = new String(read(jar, entry), StandardCharsets.ISO_8859_1);
                for (String original : originalNames) {
                    for (int at = bytes.indexOf(original); at >= 0; at = bytes.indexOf(original, at + 1)) {
                        if (startsClassName(bytes, at) && !startsWithAny(bytes, at, kept)) {
                            unrelocatedReferences.add(name + " -> " + original);
                            break;
                        }
                    }
                }
            }
        }
        assertThat(libClasses).as("classes of %s", lib).containsAll(ownClasses);
        assertThat(libClasses.size()).as("bundled classes of %s", lib).isGreaterThan(ownClasses.size());
        assertThat(misplaced).as("classes of %s outside the plugin, %s and %s", lib, shadedPrefix, kept).isEmpty();
        assertThat(unrelocatedReferences).as("references to bundled libraries by their original names in %s", lib)
                .isEmpty();

        Map<String, String> libServices = services(lib);
        Map<String, String> foreignServices = new TreeMap<>();
        libServices.forEach(
                (service, implementations) -> {
                    boolean own = implementations.equals(ownServices.get(service));
                    boolean relocatedInterface = service.startsWith(shadedPrefix.replace('/', '.'));
                    if (!own && !relocatedInterface) {
                        foreignServices.put(service, implementations);
                    }
                });
        assertThat(libServices).as("the plugin's own service files in %s", lib).containsAllEntriesOf(ownServices);
        assertThat(foreignServices).as("service files of %s registering JVM-wide", lib).isEmpty();

        try (JarFile jar = new JarFile(lib.toFile())) {
            assertThat(text(jar, "META-INF/LICENSE")).contains("Apache License", "Version 2.0, January 2004");
            assertThat(text(jar, "META-INF/NOTICE")).contains(listedInNotice);
        }
    }

    /**
     * Whether a class name starts at {@code at} of a class file: right after the 'L' of a type descriptor,
     * or at the start of a constant pool string (tag 1, two length bytes), as a class constant's name is.
     * Not inside a longer name (a relocated one) nor inside a string such as a protobuf descriptor.
     */
    private static boolean startsClassName(String classFile, int at) {
        return at > 0 && classFile.charAt(at - 1) == 'L' || at >= 3 && classFile.charAt(at - 3) == 1;
    }

    /**
     * HBase reads its defaults through the relocated classes, from their package, and loads the classes they
     * name (the client loads hbase.status.listener.class): those must be the relocated ones.
     */
    @Test
    void hbaseDefaultsLieWithTheRelocatedClassesAndNameThem() throws IOException {
        Path lib = PluginJars.flinkLib("flink-hbase-checkpoint");
        try (JarFile jar = new JarFile(lib.toFile())) {
            assertThat(jar.getJarEntry("hbase-default.xml")).as("hbase-default.xml at the root of %s", lib).isNull();
            String defaults = text(jar, "org/appendlog/hbase/shaded/hbase-default.xml");
            List<String> unrelocated = new ArrayList<>();
            Matcher values = Pattern.compile("<value>([^<]*)</value>").matcher(defaults);
            while (values.find()) {
                for (String item : values.group(1).split(",")) {
                    String name = item.trim();
                    if (name.startsWith("org.apache.hadoop.hbase.")) {
                        unrelocated.add(name);
                    }
                }
            }
            assertThat(unrelocated).as("HBase classes named in the hbase-default.xml of %s", lib).isEmpty();
            Matcher listener =
                    Pattern.compile("<name>hbase.status.listener.class</name>\\s*<value>([^<]*)</value>")
                            .matcher(defaults);
            assertThat(listener.find()).isTrue();
            assertThat(jar.getJarEntry(listener.group(1).replace('.', '/') + ".class"))
                    .as("the status listener class %s in %s", listener.group(1), lib)
                    .isNotNull();
        }
    }

    /**
     * The HBase storage registers, besides relocated interfaces, the {@code hbase} file system and its
     * delegation token provider and receiver, which Flink loads by service name and nothing else does.
     */
    @Test
    void hbaseJarRegistersItsFileSystemAndDelegationTokenServicesOnly() throws IOException {
        Map<String, String> expected =
                Map.of(
                        "org.apache.flink.core.fs.FileSystemFactory", "org.appendlog.hbase.HBaseStateFileSystemFactory",
                        "org.apache.flink.core.security.token.DelegationTokenProvider",
                        "org.appendlog.hbase.HBaseCheckpointTokenProvider",
                        "org.apache.flink.core.security.token.DelegationTokenReceiver",
                        "org.appendlog.hbase.HBaseCheckpointTokenReceiver");
        assertThat(services(PluginJars.plain("flink-hbase-checkpoint"))).isEqualTo(expected);
        Map<String, String> lib = services(PluginJars.flinkLib("flink-hbase-checkpoint"));
        lib.keySet().removeIf(service -> service.startsWith("org.appendlog.hbase.shaded."));
        assertThat(lib).isEqualTo(expected);
    }

    private static boolean startsWithAny(String text, int at, List<String> prefixes) {
        return prefixes.stream().anyMatch(p -> text.startsWith(p, at));
    }

    private static Set<String> classes(Path jarPath) throws IOException {
        try (JarFile jar = new JarFile(jarPath.toFile())) {
            return jar.stream()
                    .map(JarEntry::getName)
                    .filter(n -> n.endsWith(".class"))
                    .collect(Collectors.toCollection(TreeSet::new));
        }
    }

    /** Service interface name to its implementations, comments and blank lines left out. */
    private static Map<String, String> services(Path jarPath) throws IOException {
        Map<String, String> services = new TreeMap<>();
        try (JarFile jar = new JarFile(jarPath.toFile())) {
            for (JarEntry entry : Collections.list(jar.entries())) {
                String name = entry.getName();
                if (name.startsWith("META-INF/services/") && !entry.isDirectory()) {
                    String implementations =
                            text(jar, name)
                                    .lines()
                                    .map(String::trim)
                                    .filter(l -> !l.isEmpty() && !l.startsWith("#"))
                                    .sorted()
                                    .collect(Collectors.joining(","));
                    services.put(name.substring("META-INF/services/".length()), implementations);
                }
            }
        }
        return services;
    }

    private static String text(JarFile jar, String name) throws IOException {
        JarEntry entry = jar.getJarEntry(name);
        assertThat(entry).as("%s in %s", name, jar.getName()).isNotNull();
        return new String(read(jar, entry), StandardCharsets.UTF_8);
    }

    private static byte[] read(JarFile jar, JarEntry entry) throws IOException {
        try (InputStream in = jar.getInputStream(entry)) {
            return in.readAllBytes();
        }
    }
}
