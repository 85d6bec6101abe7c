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
import org.apache.flink.core.fs.local.LocalFileSystem;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.io.File;
import java.io.IOException;
import java.io.Serializable;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermission;
import java.util.ArrayDeque;
import java.util.Deque;
import java.util.EnumSet;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * The permissions (POSIX modes such as {@code 700}) given to the directories and files the
 * backend creates, whatever the umask would give. Flink's file system API has none: they are set
 * through the Hadoop file system behind a Flink one (HDFS and other Hadoop file systems), and
 * through POSIX attributes on the local file system. Object stores have no permissions: there
 * the bucket's access policy decides, and nothing is set.
 */
public final class FilePermissions implements Serializable {

    private static final long serialVersionUID = 1L;
    private static final Logger LOG = LoggerFactory.getLogger(FilePermissions.class);
    private static final Pattern OCTAL = Pattern.compile("[0-7]{3,4}");

    private final short directoryMode;
    private final short fileMode;

    private FilePermissions(short directoryMode, short fileMode) {
        this.directoryMode = directoryMode;
        this.fileMode = fileMode;
    }

    /** Modes written in octal ({@code 700}); null if {@code mode} is not 3 or 4 octal digits. */
    public static Short parseMode(String mode) {
        return mode != null && OCTAL.matcher(mode.trim()).matches()
                ? (short) Integer.parseInt(mode.trim(), 8)
                : null;
    }

    public static FilePermissions of(short directoryMode, short fileMode) {
        return new FilePermissions(directoryMode, fileMode);
    }

    /**
     * Creates {@code dir} and its missing parents, giving each directory it created the
     * directory mode. Returns what {@link FileSystem#mkdirs} returned.
     */
    public boolean mkdirs(FileSystem fs, Path dir) throws IOException {
        Deque<Path> missing = new ArrayDeque<>();
        for (Path p = dir; p != null && !fs.exists(p); p = p.getParent()) {
            missing.push(p);
        }
        if (!fs.mkdirs(dir)) {
            return false;
        }
        for (Path created : missing) {
            apply(fs, created, directoryMode);
        }
        return true;
    }

    /** Gives the file mode to {@code file}, which the backend just created. */
    public void restrictFile(FileSystem fs, Path file) throws IOException {
        apply(fs, file, fileMode);
    }

    private static void apply(FileSystem fs, Path path, short mode) throws IOException {
        FileSystem unwrapped = HadoopFileSystems.unwrapped(fs);
        if (unwrapped instanceof LocalFileSystem) {
            applyPosix(new File(path.toUri().getPath()), mode);
            return;
        }
        Object hadoopFs = HadoopFileSystems.hadoopFileSystemOf(unwrapped);
        if (hadoopFs == null || ObjectStoreDetector.isObjectStore(fs, path)) {
            return;
        }
        try {
            Class<?> pathClass = HadoopFileSystems.hadoopClass(hadoopFs, "org.apache.hadoop.fs.Path");
            Class<?> permissionClass =
                    HadoopFileSystems.hadoopClass(hadoopFs, "org.apache.hadoop.fs.permission.FsPermission");
            hadoopFs.getClass()
                    .getMethod("setPermission", pathClass, permissionClass)
                    .invoke(
                            hadoopFs,
                            HadoopFileSystems.hadoopPath(hadoopFs, path),
                            permissionClass.getConstructor(short.class).newInstance(mode));
        } catch (ReflectiveOperationException e) {
            throw HadoopFileSystems.ioExceptionOf(
                    e, "set permissions " + Integer.toOctalString(mode) + " on " + path);
        }
        LOG.debug("Set permissions {} on {}", Integer.toOctalString(mode), path);
    }

    private static void applyPosix(File file, short mode) throws IOException {
        Set<PosixFilePermission> permissions = EnumSet.noneOf(PosixFilePermission.class);
        PosixFilePermission[] bits = PosixFilePermission.values(); // OWNER_READ .. OTHERS_EXECUTE
        for (int i = 0; i < bits.length; i++) {
            if ((mode & (1 << (bits.length - 1 - i))) != 0) {
                permissions.add(bits[i]);
            }
        }
        try {
            Files.setPosixFilePermissions(file.toPath(), permissions);
        } catch (UnsupportedOperationException e) {
            // Not a POSIX file system (Windows): its ACLs decide.
        }
    }

    public short directoryMode() {
        return directoryMode;
    }

    public short fileMode() {
        return fileMode;
    }

    @Override
    public String toString() {
        return "directory-permissions="
                + Integer.toOctalString(directoryMode)
                + ", file-permissions="
                + Integer.toOctalString(fileMode);
    }
}
