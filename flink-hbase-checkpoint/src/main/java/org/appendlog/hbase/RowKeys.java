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

import org.apache.flink.api.common.JobID;

import org.apache.hadoop.hbase.util.Bytes;

import javax.annotation.Nullable;

import java.util.ArrayList;
import java.util.List;

/**
 * The row key layout of the checkpoint table.
 *
 * <p>Every state stream has a key such as {@code <job-id>/<run>/chk-7/<uuid>} (the path of its {@code
 * hbase://<table>/...} URI). Its bytes are stored in chunk rows
 *
 * <pre>{@code <salt>/<stream key>/<start offset, 16 hex digits>}</pre>
 *
 * <p>The salt is two hex digits derived from the stream key, so all chunks of one stream are
 * contiguous (one scan reads them in order) while the streams of one checkpoint spread over the
 * table's pre-split regions. The fixed-width offsets sort numerically, so the chunk holding any
 * position is the last row at or below {@code <prefix><position>}. Keys are readable text so that
 * an operator can find a job's rows in the HBase shell.
 */
final class RowKeys {

    static final String METADATA_STREAM = "_metadata";

    /** Suffix of the row that commits a metadata stream; sorts after every hex offset. */
    private static final String LENGTH_ROW = "length";

    /** Sorts after every 16-digit lowercase hex offset and before {@link #LENGTH_ROW}. */
    private static final String AFTER_LAST_OFFSET = "g";

    private final int saltBuckets;

    RowKeys(int saltBuckets) {
        this.saltBuckets = saltBuckets;
    }

    /**
     * {@code <job-id>/<run>/chk-<n>}; {@code <job-id>/chk-<n>} without a run (rows of older
     * versions). Neither is a prefix of the other, so no delete of one reaches the other's rows.
     */
    static String checkpointDirectory(JobID job, @Nullable String run, long checkpointId) {
        return (run == null ? job.toString() : job + "/" + run) + "/chk-" + checkpointId;
    }

    static String sharedDirectory(JobID job) {
        return job + "/shared";
    }

    static String taskOwnedDirectory(JobID job) {
        return job + "/taskowned";
    }

    static String metadataStream(String checkpointDirectory) {
        return checkpointDirectory + "/" + METADATA_STREAM;
    }

    /** All rows of one stream start with this. */
    byte[] streamPrefix(String streamKey) {
        return Bytes.toBytes(salt(streamKey) + "/" + streamKey + "/");
    }

    byte[] chunkRow(String streamKey, long offset) {
        return Bytes.add(streamPrefix(streamKey), Bytes.toBytes(String.format("%016x", offset)));
    }

    /** Upper bound (exclusive) of the stream's chunk rows. */
    byte[] afterLastChunk(String streamKey) {
        return Bytes.add(streamPrefix(streamKey), Bytes.toBytes(AFTER_LAST_OFFSET));
    }

    byte[] lengthRow(String streamKey) {
        return Bytes.add(streamPrefix(streamKey), Bytes.toBytes(LENGTH_ROW));
    }

    /** Start offset of the chunk stored in {@code row}, a row made by {@link #chunkRow}. */
    static long offsetOf(byte[] row) {
        String key = Bytes.toString(row);
        return Long.parseUnsignedLong(key.substring(key.length() - 16), 16);
    }

    /** One prefix per salt bucket: together they cover every row under {@code directoryKey}. */
    List<byte[]> directoryPrefixes(String directoryKey) {
        List<byte[]> prefixes = new ArrayList<>(saltBuckets);
        for (int bucket = 0; bucket < saltBuckets; bucket++) {
            prefixes.add(Bytes.toBytes(bucketName(bucket) + "/" + directoryKey + "/"));
        }
        return prefixes;
    }

    /** Region boundaries of a new table: one region per salt bucket. */
    byte[][] splitKeys() {
        byte[][] splits = new byte[saltBuckets - 1][];
        for (int bucket = 1; bucket < saltBuckets; bucket++) {
            splits[bucket - 1] = Bytes.toBytes(bucketName(bucket));
        }
        return splits;
    }

    private String salt(String streamKey) {
        // String.hashCode is specified by the JLS, so every JVM finds the same bucket.
        return bucketName((streamKey.hashCode() & Integer.MAX_VALUE) % saltBuckets);
    }

    private static String bucketName(int bucket) {
        return String.format("%02x", bucket);
    }
}
