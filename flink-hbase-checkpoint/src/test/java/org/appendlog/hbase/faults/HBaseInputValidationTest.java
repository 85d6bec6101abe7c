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

package org.appendlog.hbase.faults;

import org.appendlog.hbase.HBaseCheckpointStorageFactory;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;

import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.CsvSource;

import static org.assertj.core.api.Assertions.assertThat;

/** Every option of the HBase storage, given a bad type or value, fails naming the option. */
class HBaseInputValidationTest {

    private static final ReliabilityLog RELIABILITY = ReliabilityLog.of("hbase-input");
    private static final String PREFIX = "execution.checkpointing.hbase.";

    @ParameterizedTest(name = "{0} = ''{1}''")
    @CsvSource({
        "zookeeper.quorum, ''",
        "table, 'ns:checkpoints'",
        "table, 'with space'",
        "table, ''",
        "column-family, ''",
        "durability, MAYBE_WAL",
        "durability, ''",
        "write-buffer-size, lots",
        "write-buffer-size, 0",
        "chunk-size, 0",
        "chunk-size, 100mb",
        "chunk-size, big",
        "salt-buckets, 0",
        "salt-buckets, 257",
        "salt-buckets, sixteen",
        "inline-threshold, 4mb",
        "inline-threshold, tiny",
        "client.retries, -1",
        "client.retries, many",
        "client.timeout, 0 s",
        "client.timeout, -5 s",
        "client.timeout, soon",
    })
    void badValueFailsNamingTheOption(String option, String value) {
        Configuration conf = new Configuration();
        conf.setString(PREFIX + "zookeeper.quorum", "zk1:2181");
        conf.setString(PREFIX + option, value);
        Throwable error = null;
        try {
            new HBaseCheckpointStorageFactory().createFromConfig(conf, getClass().getClassLoader());
        } catch (Throwable t) {
            error = t;
        }
        assertThat(error).as("%s = '%s'", option, value).isNotNull();
        assertThat(error)
                .as("%s = '%s'", option, value)
                .isInstanceOf(IllegalConfigurationException.class)
                .hasMessageContaining(PREFIX + (option.equals("zookeeper.quorum") ? "" : option));
        RELIABILITY.record("option " + PREFIX + option + " = '" + value + "'", "rejected: " + error.getMessage());
    }
}
