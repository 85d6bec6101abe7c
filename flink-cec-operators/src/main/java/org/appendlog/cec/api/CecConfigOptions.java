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

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

import java.time.Duration;

/** Configuration keys of the CEC window operators; {@link CecOptions} holds their values. */
public final class CecConfigOptions {

    private CecConfigOptions() {}

    public static final ConfigOption<String> LOG_PATH =
            ConfigOptions.key("cec.log.path")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Directory (any Flink file system URI, e.g. hdfs:///cec/wordcount or "
                                    + "file:///data/cec/wordcount) that holds this operator's persisted output "
                                    + "stream. One directory per operator; required. Not on an object store"
                                    + " (s3://, gs://, abfs://, oss://, ...), which publishes a file only when"
                                    + " it is closed: such a path fails when the job is built.");

    public static final ConfigOption<CecMode> MODE =
            ConfigOptions.key("cec.mode")
                    .enumType(CecMode.class)
                    .defaultValue(CecMode.EVENTUAL)
                    .withDescription(
                            "How the operator checkpoints its windows: eventual (the default), open-only "
                                    + "(the baseline without CHECK tuples) or barrier (a CHECK sweep at every "
                                    + "checkpoint barrier).");

    public static final ConfigOption<Duration> POLICY_PERIOD =
            ConfigOptions.key("cec.policy.period")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(1))
                    .withDescription(
                            "CEC period T, on the operator's clock (the watermark for event-time windows, "
                                    + "processing time for processing-time and count windows). eventual mode: "
                                    + "every slow window gets a CHECK tuple at least every T, in ceil(N/M) shots "
                                    + "per period for N slow windows. barrier mode: every T, CHECKs for up to M "
                                    + "changed windows whose footprint is at least H old. 0 turns the policy off "
                                    + "(eventual mode then writes no CHECKs, like open-only; barrier mode writes "
                                    + "them only at barriers). Ignored in open-only mode.");

    public static final ConfigOption<Duration> POLICY_SLOW_THRESHOLD =
            ConfigOptions.key("cec.policy.slow-threshold")
                    .durationType()
                    .defaultValue(Duration.ofSeconds(10))
                    .withDescription(
                            "CEC threshold H, on the same clock as the period. eventual mode: a window open "
                                    + "for at least H is slow and gets CHECK tuples, changed or not; windows that "
                                    + "close sooner need none. barrier mode: a window is slow when it changed since "
                                    + "its last footprint and that footprint is at least H old.");

    public static final ConfigOption<Integer> POLICY_MAX_WINDOWS_PER_SHOT =
            ConfigOptions.key("cec.policy.max-windows-per-shot")
                    .intType()
                    .defaultValue(1000)
                    .withDescription(
                            "CEC bound M: at most this many CHECK tuples per shot of the policy, oldest "
                                    + "footprints first, so that checkpoint work is spread over time.");

    public static final ConfigOption<MemorySize> LOG_SEGMENT_SIZE =
            ConfigOptions.key("cec.log.segment-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("64mb"))
                    .withDescription("A log segment file is closed and a new one started at this size.");

    public static final ConfigOption<MemorySize> LOG_INDEX_INTERVAL =
            ConfigOptions.key("cec.log.index-interval")
                    .memoryType()
                    .defaultValue(MemorySize.parse("64kb"))
                    .withDescription(
                            "Bytes of log between two entries of the sparse time index; smaller means faster "
                                    + "seeks by timestamp and a larger index.");

    public static final ConfigOption<Duration> LOG_RETENTION_TIME =
            ConfigOptions.key("cec.log.retention.time")
                    .durationType()
                    .defaultValue(Duration.ofDays(7))
                    .withDescription(
                            "Log retention by age, as Kafka's retention.ms: a segment is deleted once its newest "
                                    + "record is this much older than the newest record of its subtask's stream "
                                    + "(stream time, not the clock), and no restore or reader of the committed "
                                    + "stream needs it. Must be positive.");

    public static final ConfigOption<MemorySize> LOG_RETENTION_SIZE =
            ConfigOptions.key("cec.log.retention.size")
                    .memoryType()
                    .noDefaultValue()
                    .withDescription(
                            "Log retention by size, as Kafka's retention.bytes: while a subtask's directory holds "
                                    + "more than this, its oldest segments are deleted, as far as no restore or "
                                    + "reader of the committed stream needs them. Unset: no bound by size.");

    public static final ConfigOption<String> LOG_DIRECTORY_PERMISSIONS =
            ConfigOptions.key("cec.log.directory-permissions")
                    .stringType()
                    .defaultValue("700")
                    .withDescription(
                            "Permissions, in octal, of each subtask's directory under the log path, whatever the "
                                    + "umask gives: by default only the job's user may list or enter it, so no "
                                    + "other user of the file system reads the stream. Set on HDFS and other Hadoop "
                                    + "file systems, and as POSIX permissions on the local file system. A reader "
                                    + "(CecLogSource) running as another user needs them widened, e.g. 750 and a "
                                    + "shared group.");

    public static final ConfigOption<String> LOG_FILE_PERMISSIONS =
            ConfigOptions.key("cec.log.file-permissions")
                    .stringType()
                    .defaultValue("600")
                    .withDescription(
                            "Permissions, in octal, of the segment and time index files the operator writes;"
                                    + " where they apply: as 'cec.log.directory-permissions'.");
}
