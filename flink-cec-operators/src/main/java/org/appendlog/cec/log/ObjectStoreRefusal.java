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

package org.appendlog.cec.log;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemKind;
import org.apache.flink.core.fs.Path;

import java.util.Locale;
import java.util.Set;

/**
 * Refuses a log path on an object store (S3, GCS, Azure, OSS). The log keeps a segment open
 * across checkpoints and makes each barrier's bytes durable with a sync; an object store
 * publishes an object only when its stream is closed, so a checkpoint would refer to bytes that
 * exist nowhere and a restore after a crash would not find its segment. The scheme is checked
 * when the job is built (the client may not have the file system), the file system's kind when
 * the operator opens the log.
 */
public final class ObjectStoreRefusal {

    private static final Set<String> SCHEMES =
            Set.of("s3", "s3a", "s3p", "s3n", "gs", "abfs", "abfss", "oss", "wasb", "wasbs");

    private ObjectStoreRefusal() {}

    /** Fails if {@code logPath}'s scheme is an object store's. */
    public static void checkScheme(String option, String logPath) {
        String scheme = new Path(logPath).toUri().getScheme();
        if (scheme != null && SCHEMES.contains(scheme.toLowerCase(Locale.ROOT))) {
            throw new IllegalArgumentException(why(option, logPath));
        }
    }

    /** Fails if {@code fs}, the file system of {@code logPath}, says it is an object store. */
    public static void checkKind(String option, Path logPath, FileSystem fs) {
        if (fs.getKind() == FileSystemKind.OBJECT_STORE) {
            throw new IllegalArgumentException(why(option, logPath.toString()));
        }
    }

    private static String why(String option, String logPath) {
        return "Invalid value '"
                + logPath
                + "' for '"
                + option
                + "': the CEC log cannot live on an object store (S3, GCS, Azure, OSS), which"
                + " publishes a file only when it is closed, while the log syncs an open segment"
                + " at every checkpoint: a restore after a crash would not find it. Use HDFS or"
                + " a POSIX file system that every TaskManager reaches.";
    }
}
