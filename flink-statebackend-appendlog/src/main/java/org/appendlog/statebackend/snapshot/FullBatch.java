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

package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.log.BatchCompression;
import org.appendlog.statebackend.log.BatchLocation;
import org.appendlog.statebackend.log.BatchStream;
import org.appendlog.statebackend.log.RecordFormat;
import org.appendlog.statebackend.log.SegmentedLog;

import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.StateEntry;

import java.io.IOException;
import java.io.OutputStream;
import java.util.Iterator;

/**
 * Every live entry of a checkpoint's table snapshots, serialized key group by key group straight
 * into a {@link BatchStream}: a full batch of the log, or a native savepoint's batch. Only one
 * entry's bytes and the stream's block are on the heap at a time, whatever the state's size.
 */
final class FullBatch implements SegmentedLog.BatchWriter {

    private final AppendLogSnapshotResources captured;
    private final KeyGroupRange keyGroups;
    private final BatchCompression compression;
    private long recordCount;

    FullBatch(
            AppendLogSnapshotResources captured,
            KeyGroupRange keyGroups,
            BatchCompression compression) {
        this.captured = captured;
        this.keyGroups = keyGroups;
        this.compression = compression;
    }

    @Override
    public BatchLocation write(OutputStream out, String segment, long position)
            throws IOException {
        BatchStream batch =
                new BatchStream(
                        out,
                        segment,
                        position,
                        captured.checkpointId,
                        keyGroups,
                        captured.stateNames,
                        compression,
                        BatchStream.BLOCK_BYTES);
        DataOutputSerializer key = new DataOutputSerializer(64);
        DataOutputSerializer value = new DataOutputSerializer(256);
        for (int kg = keyGroups.getStartKeyGroup(); kg <= keyGroups.getEndKeyGroup(); kg++) {
            for (StateTableSnapshot table : captured.tables) {
                Iterator<StateEntry<Object, Object, Object>> entries =
                        table.snapshot.getIterator(kg);
                while (entries.hasNext()) {
                    StateEntry<Object, Object, Object> entry = entries.next();
                    key.clear();
                    table.serializers.key.serialize(entry.getKey(), key);
                    table.serializers.namespace.serialize(entry.getNamespace(), key);
                    value.clear();
                    table.serializers.value.serialize(entry.getState(), value);
                    RecordFormat.write(
                            batch,
                            kg,
                            captured.checkpointId,
                            table.stateId,
                            key.getSharedBuffer(),
                            0,
                            key.length(),
                            value.getSharedBuffer(),
                            0,
                            value.length());
                }
            }
        }
        BatchLocation location = batch.finish();
        // The index reads a full batch back once its checkpoint completes: its bytes must reach
        // readers whatever sync-mode says (on HDFS a flush is an hflush).
        out.flush();
        recordCount = batch.recordCount();
        return location;
    }

    /** The records written; after {@link #write}. */
    long recordCount() {
        return recordCount;
    }
}
