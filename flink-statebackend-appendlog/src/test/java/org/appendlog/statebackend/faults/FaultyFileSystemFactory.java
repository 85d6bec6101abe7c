package org.appendlog.statebackend.faults;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;

import java.net.URI;

/** Registers {@link FaultyFileSystem} for {@code faulty://} (META-INF/services, test scope). */
public final class FaultyFileSystemFactory implements FileSystemFactory {

    @Override
    public String getScheme() {
        return FaultyFileSystem.SCHEME;
    }

    @Override
    public FileSystem create(URI fsUri) {
        return new FaultyFileSystem();
    }
}
