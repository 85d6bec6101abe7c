package org.appendlog.statebackend.log;

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.IOException;

/** The active, open segment: an append-only file written by exactly one backend instance. */
final class LogSegment {

    final String name;
    final Path path;
    final FSDataOutputStream out;

    private LogSegment(String name, Path path, FSDataOutputStream out) {
        this.name = name;
        this.path = path;
        this.out = out;
    }

    static LogSegment create(FileSystem fs, Path dir, String name) throws IOException {
        Path path = new Path(dir, name);
        FSDataOutputStream out = fs.create(path, FileSystem.WriteMode.NO_OVERWRITE);
        out.write(BatchFormat.segmentHeader());
        return new LogSegment(name, path, out);
    }

    long position() throws IOException {
        return out.getPos();
    }
}
