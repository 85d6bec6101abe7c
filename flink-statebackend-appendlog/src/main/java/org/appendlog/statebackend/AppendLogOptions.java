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

package org.appendlog.statebackend;

import org.appendlog.statebackend.log.BatchCompression;

import org.apache.flink.configuration.ConfigOption;
import org.apache.flink.configuration.ConfigOptions;
import org.apache.flink.configuration.MemorySize;

import java.time.Duration;

/** The options of the append-log state backend, all under {@code state.backend.appendlog.}. */
public final class AppendLogOptions {

    public static final ConfigOption<String> LOG_DIR =
            ConfigOptions.key("state.backend.appendlog.dir")
                    .stringType()
                    .noDefaultValue()
                    .withDescription(
                            "Directory of the state log, on any Flink file system (hdfs://, file://, ...)."
                                    + " Defaults to '<execution.checkpointing.dir>/appendlog'; with"
                                    + " neither set, the backend fails at startup naming both.");

    public static final ConfigOption<String> DIRECTORY_PERMISSIONS =
            ConfigOptions.key("state.backend.appendlog.directory-permissions")
                    .stringType()
                    .defaultValue("700")
                    .withDescription(
                            "Permissions, in octal, of the directories the backend creates under"
                                    + " the log directory (and the log directory itself if it does"
                                    + " not exist), whatever the umask gives: by default only the"
                                    + " job's user may list or enter them, as for Hadoop's staging"
                                    + " directories. Set on HDFS and other Hadoop file systems, and"
                                    + " as POSIX permissions on the local file system; object stores"
                                    + " (s3, gs, ...) have none, their bucket policy decides.");

    public static final ConfigOption<String> FILE_PERMISSIONS =
            ConfigOptions.key("state.backend.appendlog.file-permissions")
                    .stringType()
                    .defaultValue("600")
                    .withDescription(
                            "Permissions, in octal, of the files the backend creates: log segments,"
                                    + " compaction runs, and checkpoint manifests that Flink's"
                                    + " checkpoint storage writes to a file of their own (those"
                                    + " below 'state.storage.fs.memory-threshold' live in the"
                                    + " checkpoint's '_metadata', whose permissions the file"
                                    + " system's umask decides). Where they apply: as"
                                    + " 'directory-permissions'.");

    public static final ConfigOption<MemorySize> SEGMENT_SIZE =
            ConfigOptions.key("state.backend.appendlog.segment-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("64mb"))
                    .withDescription(
                            "Size at which the active log segment is closed and the next checkpoint"
                                    + " opens a new one. At least 1 kb.");

    public static final ConfigOption<Boolean> SEAL_EVERY_BATCH =
            ConfigOptions.key("state.backend.appendlog.seal-every-batch")
                    .booleanType()
                    .defaultValue(false)
                    .withDescription(
                            "Write every checkpoint's batch to a segment of its own and close it"
                                    + " before the checkpoint is acknowledged, instead of appending"
                                    + " to an open segment and syncing it. Always on for object"
                                    + " stores (a file system of kind OBJECT_STORE, or the schemes"
                                    + " s3, s3a, s3p, s3n, gs, abfs, abfss, oss, wasb, wasbs), where"
                                    + " written bytes exist only once their object is closed; set it"
                                    + " for another file system that behaves so, such as a mounted"
                                    + " bucket. Compaction then also merges small segments"
                                    + " ('compaction.max-segments').");

    public static final ConfigOption<MemorySize> CHANGE_BUFFER_SIZE =
            ConfigOptions.key("state.backend.appendlog.change-buffer-size")
                    .memoryType()
                    .defaultValue(MemorySize.parse("64mb"))
                    .withDescription(
                            "Serialized writes that the task buffers between two checkpoints before it"
                                    + " keeps only the latest write of each entry in place (and doubles"
                                    + " this bound if that did not halve the buffer). Matters only"
                                    + " when a checkpoint interval sees more writes than this. At"
                                    + " least 1 mb.");

    public static final ConfigOption<SyncMode> SYNC_MODE =
            ConfigOptions.key("state.backend.appendlog.sync-mode")
                    .enumType(SyncMode.class)
                    .defaultValue(SyncMode.HSYNC)
                    .withDescription(
                            "How each checkpoint's batch is made durable before the checkpoint is"
                                    + " acknowledged: 'hsync' (to disk on every replica), 'hflush'"
                                    + " (to the replicas' memory) or 'none' (left to the file system).");

    public static final ConfigOption<BatchCompression> COMPRESSION =
            ConfigOptions.key("state.backend.appendlog.compression")
                    .enumType(BatchCompression.class)
                    .defaultValue(BatchCompression.LZ4)
                    .withDescription(
                            "How each key group's records are stored in the log's batches (and in"
                                    + " native savepoints): 'lz4' (LZ4 blocks) or 'none' (stored"
                                    + " as they are; incremental batches then keep batch format 2,"
                                    + " which earlier versions read)."
                                    + " Batches of either kind are read whatever this says.");

    public static final ConfigOption<Double> FULL_CHECKPOINT_RATIO =
            ConfigOptions.key("state.backend.appendlog.full-checkpoint-ratio")
                    .doubleType()
                    .defaultValue(1.0)
                    .withDescription(
                            "A checkpoint appends every live entry instead of the entries changed"
                                    + " since the last completed checkpoint when those outnumber the"
                                    + " live entries by more than this ratio (state that turns over"
                                    + " between checkpoints, such as windows); the log before such a"
                                    + " batch is no longer needed. Must be greater than 0; larger"
                                    + " values make full batches rarer, and 'Infinity' turns them"
                                    + " off.");

    public static final ConfigOption<Integer> RESTORE_PARALLELISM =
            ConfigOptions.key("state.backend.appendlog.restore-parallelism")
                    .intType()
                    .defaultValue(2)
                    .withDescription(
                            "Threads that read the log in parallel on restore ('appendlog-restore"
                                    + " <key groups> #n'); each reads contiguous slices of the owned"
                                    + " key groups from every batch. With 1, the task thread reads"
                                    + " the log itself.");

    public static final ConfigOption<Boolean> COMPACTION_ENABLED =
            ConfigOptions.key("state.backend.appendlog.compaction.enabled")
                    .booleanType()
                    .defaultValue(true)
                    .withDescription(
                            "Whether a background compactor rewrites the live records of dirty"
                                    + " segments, so that the log, restores and checkpoint handles"
                                    + " stay short.");

    public static final ConfigOption<Double> COMPACTION_MIN_DIRTY_RATIO =
            ConfigOptions.key("state.backend.appendlog.compaction.min-dirty-ratio")
                    .doubleType()
                    .defaultValue(0.5)
                    .withDescription(
                            "Compaction starts once dead bytes / total bytes of the closed segments"
                                    + " reaches this ratio (as Kafka's min.cleanable.dirty.ratio)."
                                    + " A pass cleans only segments at least this dead. In (0, 1];"
                                    + " lower values compact more often: more CPU and I/O, faster"
                                    + " restores, smaller logs.");

    public static final ConfigOption<Integer> COMPACTION_MAX_SEGMENTS =
            ConfigOptions.key("state.backend.appendlog.compaction.max-segments")
                    .intType()
                    .defaultValue(32)
                    .withDescription(
                            "With sealed segments (object stores, 'seal-every-batch'), compaction"
                                    + " merges the smallest segments, dead bytes or not, once a"
                                    + " completed checkpoint refers to this many, down to half as"
                                    + " many: a checkpoint's handle then names at most this many"
                                    + " objects, plus one per checkpoint that completes while a"
                                    + " compaction pass runs. At least 2. Ignored for other file"
                                    + " systems, whose segments are large.");

    public static final ConfigOption<Duration> COMPACTION_MIN_LAG =
            ConfigOptions.key("state.backend.appendlog.compaction.min-lag")
                    .durationType()
                    .defaultValue(Duration.ZERO)
                    .withDescription(
                            "A segment is compacted only after it was last written at least this"
                                    + " long ago (as Kafka's min.compaction.lag.ms). Not negative.");

    public static final ConfigOption<MemorySize> COMPACTION_IO_RATE_LIMIT =
            ConfigOptions.key("state.backend.appendlog.compaction.io-rate-limit")
                    .memoryType()
                    .defaultValue(MemorySize.ZERO)
                    .withDescription(
                            "Bytes per second that compaction may read plus write; 0 means"
                                    + " unlimited.");

    public static final ConfigOption<Integer> COMPACTION_THREADS =
            ConfigOptions.key("state.backend.appendlog.compaction.threads")
                    .intType()
                    .defaultValue(1)
                    .withDescription(
                            "Threads that one compaction pass uses ('appendlog-compactor <key"
                                    + " groups>'); each reads and filters contiguous slices of the"
                                    + " key groups. Passes of one backend never overlap. At least 1.");

    private AppendLogOptions() {}
}
