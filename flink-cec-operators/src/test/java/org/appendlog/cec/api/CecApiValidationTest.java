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

package org.appendlog.cec.api;

import org.appendlog.cec.api.CecConfigOptions;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.cec.log.LogRetention;
import org.appendlog.cec.source.CecLogSource;

import org.apache.flink.api.common.typeinfo.TypeHint;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.assigners.EventTimeSessionWindows;
import org.apache.flink.streaming.api.windowing.assigners.GlobalWindows;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import org.junit.jupiter.api.Test;

import java.time.Duration;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Bad configuration, unsupported windows and a log source of the wrong type fail early, naming what to fix. */
class CecApiValidationTest {

    @Test
    void defaultsNeedOnlyTheLogPath() {
        CecOptions options = CecOptions.builder("file:///data/cec").build();
        assertThat(options.mode()).isEqualTo(CecMode.EVENTUAL);
        assertThat(options.periodMillis()).isEqualTo(1000);
        assertThat(options.slowThresholdMillis()).isEqualTo(10_000);
        assertThat(options.maxWindowsPerShot()).isEqualTo(1000);
        assertThat(options.segmentBytes()).isEqualTo(64L << 20);
        assertThat(options.indexIntervalBytes()).isEqualTo(64L << 10);
        assertThat(options.retentionMillis()).isEqualTo(Duration.ofDays(7).toMillis());
        assertThat(options.retentionBytes()).isEqualTo(LogRetention.UNBOUNDED);
    }

    @Test
    void readsTheConfigurationKeys() {
        Configuration config = new Configuration();
        config.setString("cec.log.path", "hdfs:///cec/x");
        config.setString("cec.policy.period", "250 ms");
        config.setString("cec.policy.slow-threshold", "2 s");
        config.setString("cec.policy.max-windows-per-shot", "7");
        config.setString("cec.mode", "open-only");
        config.setString("cec.log.retention.time", "1 h");
        config.setString("cec.log.retention.size", "10 gb");
        CecOptions options = CecOptions.fromConfiguration(config);
        assertThat(options.mode()).isEqualTo(CecMode.OPEN_ONLY);
        assertThat(options.logPath().toUri().getScheme()).isEqualTo("hdfs");
        assertThat(options.periodMillis()).isEqualTo(250);
        assertThat(options.slowThresholdMillis()).isEqualTo(2000);
        assertThat(options.maxWindowsPerShot()).isEqualTo(7);
        assertThat(options.retentionMillis()).isEqualTo(3_600_000);
        assertThat(options.retentionBytes()).isEqualTo(10L << 30);
    }

    @Test
    void badValuesNameTheKey() {
        assertThatThrownBy(() -> CecOptions.fromConfiguration(new Configuration()))
                .hasMessageContaining("cec.log.path");
        assertThatThrownBy(() -> CecOptions.builder("file:///data/cec").maxWindowsPerShot(0).build())
                .hasMessageContaining("cec.policy.max-windows-per-shot");
        assertThatThrownBy(() -> CecOptions.builder("file:///data/cec").period(Duration.ofMillis(-1)).build())
                .hasMessageContaining("cec.policy.period");
        assertThatThrownBy(() -> CecOptions.builder("file:///data/cec")
                        .set(CecConfigOptions.LOG_SEGMENT_SIZE, MemorySize.parse("100b")).build())
                .hasMessageContaining("cec.log.segment-size");
        Configuration badMode = new Configuration();
        badMode.setString("cec.log.path", "file:///data/cec");
        badMode.setString("cec.mode", "barriers");
        assertThatThrownBy(() -> CecOptions.fromConfiguration(badMode))
                .hasMessageContaining("cec.mode")
                .hasMessageContaining("barriers");
        assertThatThrownBy(() -> CecOptions.builder("file:///data/cec").retentionTime(Duration.ZERO).build())
                .hasMessageContaining("'cec.log.retention.time': must be positive");
        assertThatThrownBy(() -> CecOptions.builder("file:///data/cec").retentionSize(MemorySize.ZERO).build())
                .hasMessageContaining("'cec.log.retention.size': must be positive");
        assertThatThrownBy(() -> CecOptions.builder("file:///data/cec")
                        .set(CecConfigOptions.LOG_DIRECTORY_PERMISSIONS, "rwx------").build())
                .hasMessageContaining("'rwx------' for 'cec.log.directory-permissions'");
        assertThatThrownBy(() -> CecOptions.builder("file:///data/cec")
                        .set(CecConfigOptions.LOG_FILE_PERMISSIONS, "680").build())
                .hasMessageContaining("'680' for 'cec.log.file-permissions'");
    }

    @Test
    void anObjectStoreLogPathIsRefusedWhenTheJobIsBuilt() {
        for (String path :
                new String[] {
                    "s3://bucket/cec", "s3a://bucket/cec", "gs://bucket/cec",
                    "abfss://container@account.dfs.core.windows.net/cec", "oss://bucket/cec",
                    "wasb://container@account.blob.core.windows.net/cec"
                }) {
            assertThatThrownBy(() -> CecOptions.builder(path).build())
                    .as(path)
                    .isInstanceOf(IllegalArgumentException.class)
                    .hasMessageContaining("'" + path + "' for 'cec.log.path'")
                    .hasMessageContaining("cannot live on an object store");
        }
        assertThat(CecOptions.builder("hdfs:///cec/x").build().logPath().toUri().getScheme())
                .isEqualTo("hdfs");
    }

    @Test
    void unsupportedWindowsAreRejected() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        KeyedStream<Tuple2<String, Long>, String> keyed =
                env.fromData(Tuple2.of("a", 1L)).keyBy(t -> t.f0);
        assertThatThrownBy(() -> CecWindows.of(keyed).window(EventTimeSessionWindows.withGap(Duration.ofSeconds(1))))
                .hasMessageContaining("merging");
        assertThatThrownBy(() -> CecWindows.of(keyed).window(GlobalWindows.create()))
                .hasMessageContaining("countWindow");
        assertThatThrownBy(() -> CecWindows.of(keyed).countWindow(0)).hasMessageContaining("at least 1");
    }

    @Test
    void aLogSourceNeedsTheOperatorsOutputType() {
        TypeInformation<CecRecord<String, TimeWindow, Long, Long>> generic =
                TypeInformation.of(new TypeHint<CecRecord<String, TimeWindow, Long, Long>>() {});
        assertThatThrownBy(() -> CecLogSource.of("file:///data/cec", generic, Long.MIN_VALUE))
                .isInstanceOf(IllegalArgumentException.class)
                .hasMessageContaining("file:///data/cec")
                .hasMessageContaining("CecRecordTypeInfo")
                .hasMessageContaining("cecStream.getType()")
                .hasMessageContaining(generic.toString())
                .hasMessageContaining(generic.getClass().getName());
    }
}
