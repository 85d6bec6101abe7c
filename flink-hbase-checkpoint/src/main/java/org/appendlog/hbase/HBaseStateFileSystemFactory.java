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

package org.appendlog.hbase;

import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.FileSystemFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.net.URI;

/**
 * Registers the {@code hbase} scheme with Flink (via {@code META-INF/services}), so that state
 * handles restored from a checkpoint's metadata can be read and discarded. See {@link
 * HBaseStateFileSystem}.
 */
public final class HBaseStateFileSystemFactory implements FileSystemFactory {

    private static final Logger LOG = LoggerFactory.getLogger(HBaseStateFileSystemFactory.class);

    /**
     * Flink calls this with the cluster configuration when a process starts. If that
     * configuration names an HBase cluster for checkpoints, its table's {@code hbase://} paths are
     * readable from then on, even before any job created its checkpoint storage or any checkpoint
     * was read back from the high-availability store (which registers its own table, see {@link
     * HBaseCompletedCheckpointStorageLocation}).
     */
    @Override
    public void configure(Configuration config) {
        if (!config.contains(HBaseCheckpointStorageOptions.ZOOKEEPER_QUORUM)
                && !config.contains(HBaseCheckpointStorageOptions.SITE_FILE)) {
            return;
        }
        try {
            CheckpointTables.register(HBaseStorageSettings.fromConfig(config));
        } catch (IllegalConfigurationException e) {
            // Never fail the file system setup of the whole process; jobs report it themselves.
            LOG.warn("Ignoring invalid HBase checkpoint storage options for hbase:// paths: {}", e.getMessage());
        }
    }

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
        return new HBaseStateFileSystem(
                URI.create(HBaseCheckpointPointer.SCHEME + "://" + fsUri.getAuthority() + "/"));
    }
}
