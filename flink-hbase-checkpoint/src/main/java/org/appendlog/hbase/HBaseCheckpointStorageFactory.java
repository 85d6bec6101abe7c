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

import org.apache.flink.configuration.IllegalConfigurationException;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.runtime.state.CheckpointStorageFactory;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

/**
 * Creates the {@link HBaseCheckpointStorage} from {@code execution.checkpointing.storage:
 * org.appendlog.hbase.HBaseCheckpointStorageFactory} and the {@code
 * execution.checkpointing.hbase.*} options.
 */
public final class HBaseCheckpointStorageFactory
        implements CheckpointStorageFactory<HBaseCheckpointStorage> {

    private static final Logger LOG = LoggerFactory.getLogger(HBaseCheckpointStorageFactory.class);

    @Override
    public HBaseCheckpointStorage createFromConfig(ReadableConfig config, ClassLoader classLoader)
            throws IllegalConfigurationException {
        HBaseCheckpointStorage storage = HBaseCheckpointStorage.fromConfig(config);
        storage.warnOfWalRisk(LOG);
        LOG.debug("Checkpoint storage is {}", storage);
        return storage;
    }
}
