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

import org.apache.flink.util.IOUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import javax.annotation.Nullable;

import java.io.BufferedOutputStream;
import java.io.File;
import java.io.FileOutputStream;
import java.io.IOException;
import java.io.OutputStream;

/**
 * Writes to the log's stream and, while the local disk takes it, the same bytes to a task-local
 * copy. The copy only ever saves a remote read: when it fails (a full disk, a removed directory)
 * it is dropped and deleted, never the write of the state.
 */
public final class CopyingOutputStream extends OutputStream {

    private static final Logger LOG = LoggerFactory.getLogger(CopyingOutputStream.class);

    private final OutputStream target;
    private final File copyFile;
    @Nullable private OutputStream copy;

    private CopyingOutputStream(OutputStream target, File copyFile, @Nullable OutputStream copy) {
        this.target = target;
        this.copyFile = copyFile;
        this.copy = copy;
    }

    /** Copies what is written to {@code target} into {@code copyFile}, if it can be created. */
    static CopyingOutputStream to(OutputStream target, File copyFile) {
        OutputStream copy = null;
        try {
            copy = new BufferedOutputStream(new FileOutputStream(copyFile), 64 * 1024);
        } catch (IOException e) {
            LOG.warn("Cannot create the task-local copy {}; reading it will be remote", copyFile, e);
        }
        return new CopyingOutputStream(target, copyFile, copy);
    }

    @Override
    public void write(int b) throws IOException {
        target.write(b);
        if (copy != null) {
            try {
                copy.write(b);
            } catch (IOException e) {
                drop(e);
            }
        }
    }

    @Override
    public void write(byte[] bytes, int offset, int length) throws IOException {
        target.write(bytes, offset, length);
        if (copy != null) {
            try {
                copy.write(bytes, offset, length);
            } catch (IOException e) {
                drop(e);
            }
        }
    }

    /**
     * Hands the copy's buffered bytes to the local file system (no sync: a local copy serves
     * restarts within the TaskManager, and a reader verifies every batch's checksum).
     */
    void flushCopy() {
        if (copy != null) {
            try {
                copy.flush();
            } catch (IOException e) {
                drop(e);
            }
        }
    }

    @Override
    public void flush() throws IOException {
        target.flush();
        flushCopy();
    }

    @Override
    public void close() throws IOException {
        try {
            target.close();
        } finally {
            closeCopy();
        }
    }

    /** Closes the copy alone, as it is now. */
    public void closeCopy() {
        if (copy != null) {
            try {
                copy.close();
            } catch (IOException e) {
                drop(e);
            }
            copy = null;
        }
    }

    private void drop(IOException e) {
        LOG.warn(
                "Writing the task-local copy {} failed; dropping it, reading it will be remote",
                copyFile,
                e);
        IOUtils.closeQuietly(copy);
        copy = null;
        if (!copyFile.delete() && copyFile.exists()) {
            LOG.warn("Could not delete the failed task-local copy {}", copyFile);
        }
    }
}
