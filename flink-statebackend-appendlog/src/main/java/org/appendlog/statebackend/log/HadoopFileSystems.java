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
import org.apache.flink.util.WrappingProxy;
import org.apache.flink.util.WrappingProxyUtil;

import javax.annotation.Nullable;

import java.io.IOException;
import java.lang.reflect.InvocationTargetException;

/**
 * The Hadoop file system behind a Flink one, reached by reflection so that the backend needs no
 * Hadoop classes: any Flink file system with {@code getHadoopFileSystem()}. Flink wraps the file
 * system it hands out: on a task thread in its safety net ({@code SafetyNetWrapperFileSystem}),
 * and a file system loaded as a plugin in a class-loader fixing wrapper; both are {@link
 * WrappingProxy}s, stripped first. Hadoop's classes are loaded from the Hadoop file system's own
 * class loader, the plugin's where it is one.
 */
public final class HadoopFileSystems {

    private HadoopFileSystems() {}

    @SuppressWarnings("unchecked")
    static FileSystem unwrapped(FileSystem fs) {
        return fs instanceof WrappingProxy
                ? WrappingProxyUtil.stripProxy((WrappingProxy<FileSystem>) fs)
                : fs;
    }

    /** The {@code org.apache.hadoop.fs.FileSystem} behind {@code fs}, or null if there is none. */
    @Nullable
    static Object hadoopFileSystemOf(FileSystem fs) {
        FileSystem unwrapped = unwrapped(fs);
        try {
            return unwrapped.getClass().getMethod("getHadoopFileSystem").invoke(unwrapped);
        } catch (ReflectiveOperationException | RuntimeException e) {
            return null;
        }
    }

    static Class<?> hadoopClass(Object hadoopFs, String name) throws ClassNotFoundException {
        return Class.forName(name, false, hadoopFs.getClass().getClassLoader());
    }

    /** {@code path} as an {@code org.apache.hadoop.fs.Path}. */
    static Object hadoopPath(Object hadoopFs, Path path) throws ReflectiveOperationException {
        return hadoopClass(hadoopFs, "org.apache.hadoop.fs.Path")
                .getConstructor(String.class)
                .newInstance(path.toUri().getPath());
    }

    /**
     * Who {@code fs} acts as, for error messages: for a Hadoop file system the user Hadoop
     * authenticates, e.g. {@code alice@EXAMPLE.COM (auth:KERBEROS)} (its {@code
     * UserGroupInformation.getCurrentUser()}); otherwise the operating system user of this process.
     */
    public static String userOf(FileSystem fs) {
        Object hadoopFs = hadoopFileSystemOf(fs);
        if (hadoopFs != null) {
            try {
                return String.valueOf(
                        hadoopClass(hadoopFs, "org.apache.hadoop.security.UserGroupInformation")
                                .getMethod("getCurrentUser")
                                .invoke(null));
            } catch (ReflectiveOperationException | RuntimeException e) {
                // No Hadoop security classes: fall back to the process's user.
            }
        }
        return "OS user " + System.getProperty("user.name");
    }

    /**
     * {@code e} itself, or, if the file system denied access (Hadoop's {@code
     * AccessControlException}, whose message names the user by short name and the first inode it
     * refused), an exception that also names what was tried and the full user, e.g. {@code
     * alice@EXAMPLE.COM (auth:KERBEROS)}.
     */
    static IOException namingUser(IOException e, FileSystem fs, String what) {
        if (!e.getClass().getSimpleName().equals("AccessControlException")) {
            return e;
        }
        // The first line: the rest is the NameNode's stack trace, which the cause keeps.
        String refusal = String.valueOf(e.getMessage()).split("\n", 2)[0];
        return new IOException(what + " as " + userOf(fs) + ": " + refusal, e);
    }

    /** The {@link IOException} a reflective call threw, or {@code e} wrapped in one. */
    static IOException ioExceptionOf(ReflectiveOperationException e, String what) {
        Throwable cause = e instanceof InvocationTargetException ? e.getCause() : e;
        return cause instanceof IOException
                ? (IOException) cause
                : new IOException("Could not " + what, cause);
    }
}
