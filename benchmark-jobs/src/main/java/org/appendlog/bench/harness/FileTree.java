package org.appendlog.bench.harness;

import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.IOException;
import java.util.function.ObjLongConsumer;

/** The files under a directory of any Flink {@link FileSystem} (local, hdfs), listed recursively. */
final class FileTree implements StoredEntries {

    private final Path root;

    FileTree(String rootUri) {
        this.root = new Path(rootUri);
    }

    @Override
    public void list(ObjLongConsumer<String> entry) throws IOException {
        FileSystem fs = root.getFileSystem();
        if (fs.exists(root)) {
            list(fs, root, entry);
        }
    }

    private static void list(FileSystem fs, Path dir, ObjLongConsumer<String> entry) throws IOException {
        FileStatus[] children = fs.listStatus(dir);
        if (children == null) {
            return;
        }
        for (FileStatus child : children) {
            if (child.isDir()) {
                list(fs, child.getPath(), entry);
            } else {
                entry.accept(child.getPath().toString(), child.getLen());
            }
        }
    }
}
