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
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.fs.local.LocalFileSystem;
import org.apache.flink.util.WrappingProxy;
import org.apache.flink.util.WrappingProxyUtil;

import java.io.File;
import java.io.IOException;
import java.io.Serializable;
import java.lang.reflect.InvocationTargetException;
import java.nio.file.Files;
import java.nio.file.attribute.PosixFilePermissions;

/**
 * The permissions (POSIX modes such as {@code 700}) of a subtask's log directory and of the
 * segment and index files in it, whatever the umask gives ({@code cec.log.directory-permissions},
 * {@code cec.log.file-permissions}). Set through the Hadoop file system behind a Flink one (found
 * by reflection: the operators need no Hadoop classes), or as POSIX permissions on the local file
 * system; other file systems keep what they give.
 */
public final class LogPermissions implements Serializable {

    private static final long serialVersionUID = 1L;

    private final short directoryMode;
    private final short fileMode;

    private LogPermissions(short directoryMode, short fileMode) {
        this.directoryMode = directoryMode;
        this.fileMode = fileMode;
    }

    public static LogPermissions of(short directoryMode, short fileMode) {
        return new LogPermissions(directoryMode, fileMode);
    }

    void restrictDirectory(FileSystem fs, Path directory) throws IOException {
        apply(fs, directory, directoryMode);
    }

    void restrictFile(FileSystem fs, Path file) throws IOException {
        apply(fs, file, fileMode);
    }

    @SuppressWarnings("unchecked")
    private static void apply(FileSystem fs, Path path, short mode) throws IOException {
        FileSystem unwrapped =
                fs instanceof WrappingProxy ? WrappingProxyUtil.stripProxy((WrappingProxy<FileSystem>) fs) : fs;
        if (unwrapped instanceof LocalFileSystem) {
            String rwx = "rwxrwxrwx";
            StringBuilder bits = new StringBuilder();
            for (int i = 0; i < 9; i++) {
                bits.append((mode & (1 << (8 - i))) != 0 ? rwx.charAt(i) : '-');
            }
            Files.setPosixFilePermissions(
                    new File(path.toUri().getPath()).toPath(), PosixFilePermissions.fromString(bits.toString()));
            return;
        }
        Object hadoopFs;
        try {
            hadoopFs = unwrapped.getClass().getMethod("getHadoopFileSystem").invoke(unwrapped);
        } catch (ReflectiveOperationException e) {
            return;
        }
        try {
            ClassLoader loader = hadoopFs.getClass().getClassLoader();
            Class<?> pathClass = Class.forName("org.apache.hadoop.fs.Path", false, loader);
            Class<?> permissionClass = Class.forName("org.apache.hadoop.fs.permission.FsPermission", false, loader);
            hadoopFs.getClass()
                    .getMethod("setPermission", pathClass, permissionClass)
                    .invoke(
                            hadoopFs,
                            pathClass.getConstructor(String.class).newInstance(path.toUri().getPath()),
                            permissionClass.getConstructor(short.class).newInstance(mode));
        } catch (InvocationTargetException e) {
            throw e.getCause() instanceof IOException
                    ? (IOException) e.getCause()
                    : new IOException("Could not set permissions on CEC log file " + path, e.getCause());
        } catch (ReflectiveOperationException e) {
            throw new IOException("Could not set permissions on CEC log file " + path, e);
        }
    }

    @Override
    public String toString() {
        return Integer.toOctalString(directoryMode) + "/" + Integer.toOctalString(fileMode);
    }
}
