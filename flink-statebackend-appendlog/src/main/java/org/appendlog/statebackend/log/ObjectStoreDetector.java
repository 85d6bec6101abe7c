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

package org.appendlog.statebackend.log;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemKind;
import org.apache.flink.core.fs.Path;

import java.util.Locale;
import java.util.Set;

/**
 * Tells whether a directory lies on an object store (S3, GCS, Azure, OSS): a file system on which
 * the bytes written to a stream exist only once the stream is closed, whatever {@code flush} or
 * {@code sync} answered. The file system's kind says so for Flink's own S3 file systems; the
 * scheme says so for those that report themselves as a plain file system (Hadoop's through
 * Flink's Hadoop bridge).
 */
public final class ObjectStoreDetector {

    /** Schemes of object stores, whatever kind their file system reports. */
    private static final Set<String> SCHEMES =
            Set.of("s3", "s3a", "s3p", "s3n", "gs", "abfs", "abfss", "oss", "wasb", "wasbs");

    private ObjectStoreDetector() {}

    /** Whether {@code dir}, on {@code fs}, lies on an object store. */
    public static boolean isObjectStore(FileSystem fs, Path dir) {
        if (fs.getKind() == FileSystemKind.OBJECT_STORE) {
            return true;
        }
        String scheme = dir.toUri().getScheme();
        if (scheme == null) {
            scheme = fs.getUri().getScheme();
        }
        return scheme != null && SCHEMES.contains(scheme.toLowerCase(Locale.ROOT));
    }
}
