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
import org.apache.flink.core.fs.Path;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.IOException;
import java.lang.reflect.Method;
import java.util.concurrent.TimeUnit;

/**
 * Makes a segment readable that its writer left open on HDFS. After a DataNode restart while a
 * segment was open, its last block waits for recovery and HDFS refuses to open the file ("Cannot
 * obtain block length") for as long as the writer's client holds the lease, possibly forever; the
 * synced batches in it belong to completed checkpoints. Recovering the lease (as HBase does for
 * its write-ahead logs) closes the file at its durable length and fences the old writer, whose
 * next append then fails and moves to a new segment.
 *
 * <p>Found by reflection ({@link HadoopFileSystems}): a Hadoop file system with {@code
 * recoverLease(Path)} (HDFS).
 */
final class LeaseRecovery {

    private static final Logger LOG = LoggerFactory.getLogger(LeaseRecovery.class);
    private static final long TIMEOUT_MILLIS = 60_000;
    private static final long PAUSE_MILLIS = 500;

    private LeaseRecovery() {}

    /** Whether {@code e}, from opening a file, means the file waits for lease recovery. */
    static boolean isNeeded(IOException e) {
        return e.getClass().getSimpleName().equals("CannotObtainBlockLengthException")
                || String.valueOf(e.getMessage()).contains("Cannot obtain block length");
    }

    /**
     * Recovers the lease of {@code path} and waits until the file is closed. Returns false if the
     * file system cannot do that (not HDFS) or it did not happen within a minute.
     */
    static boolean recover(Path path) throws IOException {
        Object hadoopFs;
        Method recoverLease;
        Object hadoopPath;
        try {
            FileSystem fs = HadoopFileSystems.unwrapped(path.getFileSystem());
            hadoopFs = fs.getClass().getMethod("getHadoopFileSystem").invoke(fs);
            Class<?> pathClass = HadoopFileSystems.hadoopClass(hadoopFs, "org.apache.hadoop.fs.Path");
            recoverLease = hadoopFs.getClass().getMethod("recoverLease", pathClass);
            hadoopPath = HadoopFileSystems.hadoopPath(hadoopFs, path);
        } catch (ReflectiveOperationException | RuntimeException e) {
            LOG.warn(
                    "State log segment {} was left open by its writer, and its file system cannot"
                            + " recover leases ({}): it is readable only once the writer's lease"
                            + " expires",
                    path,
                    e.toString());
            return false;
        }
        LOG.warn(
                "State log segment {} was left open by its writer (a DataNode restarted while it"
                        + " was written?); recovering its lease so that it can be read",
                path);
        long deadline = System.nanoTime() + TimeUnit.MILLISECONDS.toNanos(TIMEOUT_MILLIS);
        try {
            while (true) {
                if ((Boolean) recoverLease.invoke(hadoopFs, hadoopPath)) {
                    LOG.info("Recovered the lease of state log segment {}", path);
                    return true;
                }
                if (System.nanoTime() - deadline > 0) {
                    return false;
                }
                Thread.sleep(PAUSE_MILLIS);
            }
        } catch (ReflectiveOperationException e) {
            Throwable cause = e.getCause() != null ? e.getCause() : e;
            throw new IOException("Could not recover the lease of state log segment " + path, cause);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new java.io.InterruptedIOException(
                    "Interrupted while recovering the lease of state log segment " + path);
        }
    }
}
