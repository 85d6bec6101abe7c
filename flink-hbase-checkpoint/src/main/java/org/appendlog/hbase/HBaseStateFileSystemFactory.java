package org.appendlog.hbase;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;

import java.net.URI;

/**
 * Registers the {@code hbase} scheme with Flink (via {@code META-INF/services}), so that state
 * handles restored from a checkpoint's metadata can be read and discarded. See {@link
 * HBaseStateFileSystem}.
 */
public final class HBaseStateFileSystemFactory implements FileSystemFactory {

    @Override
    public String getScheme() {
        return HBaseCheckpointPointer.SCHEME;
    }

    @Override
    public FileSystem create(URI fsUri) {
        if (fsUri.getAuthority() == null || fsUri.getAuthority().isEmpty()) {
            throw new IllegalArgumentException(
                    "HBase state path '" + fsUri + "' names no table: expected hbase://<table>/...");
        }
        return new HBaseStateFileSystem(URI.create(HBaseCheckpointPointer.SCHEME + "://" + fsUri.getAuthority() + "/"));
    }
}
