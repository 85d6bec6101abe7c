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

import javax.annotation.Nullable;

import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * External pointers of checkpoints in HBase: {@code hbase://<table>/<job-id>/<run>/chk-<n>} (see
 * {@link RunId}), the string a user passes to {@code flink run -s}. A pointer to the checkpoint's
 * {@code _metadata} is accepted too, as Flink accepts both for file system checkpoints. Pointers
 * without the run, {@code hbase://<table>/<job-id>/chk-<n>}, as older versions of this storage
 * wrote them, resolve to the rows those versions wrote.
 */
final class HBaseCheckpointPointer {

    static final String SCHEME = "hbase";

    private static final Pattern POINTER =
            Pattern.compile(
                    "hbase://([^/]+)/([0-9a-fA-F]{32})/(?:("
                            + RunId.REGEX
                            + ")/)?chk-([0-9]+)(?:/(?:"
                            + RowKeys.METADATA_STREAM
                            + ")?)?");

    final String table;
    final JobID jobId;
    /** Null in pointers of older versions, whose rows have no run in their keys. */
    @Nullable final String run;
    final long checkpointId;

    private HBaseCheckpointPointer(
            String table, JobID jobId, @Nullable String run, long checkpointId) {
        this.table = table;
        this.jobId = jobId;
        this.run = run;
        this.checkpointId = checkpointId;
    }

    static boolean isHBasePointer(String pointer) {
        return pointer.startsWith(SCHEME + "://");
    }

    static HBaseCheckpointPointer parse(String pointer) {
        Matcher matcher = POINTER.matcher(pointer.trim());
        if (!matcher.matches()) {
            throw new IllegalArgumentException(
                    "'"
                            + pointer
                            + "' is not an HBase checkpoint pointer; expected"
                            + " hbase://<table>/<job-id>/run-<16 hex digits>/chk-<n>");
        }
        return new HBaseCheckpointPointer(
                matcher.group(1),
                JobID.fromHexString(matcher.group(2).toLowerCase()),
                matcher.group(3),
                Long.parseLong(matcher.group(4)));
    }

    static HBaseCheckpointPointer of(String table, JobID jobId, String run, long checkpointId) {
        return new HBaseCheckpointPointer(table, jobId, run, checkpointId);
    }

    /** The URI of any key in a table; also the path of the state handles that point at rows. */
    static String uri(String table, String key) {
        return SCHEME + "://" + table + "/" + key;
    }

    String checkpointDirectory() {
        return RowKeys.checkpointDirectory(jobId, run, checkpointId);
    }

    @Override
    public String toString() {
        return uri(table, checkpointDirectory());
    }
}
