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

import org.apache.flink.core.memory.DataInputView;
import org.apache.flink.core.memory.DataOutputView;

import java.io.IOException;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The writers of one job run that a checkpoint descends from, each with the id of its last
 * snapshot in that descent: the backend that wrote the checkpoint (with the checkpoint's own id)
 * and those it restored from, back to the run's first attempt (a restore from another run's
 * checkpoint starts afresh). A failover restores the latest completed checkpoint, so a writer of
 * the run missing here completed no checkpoint, and a file of a listed writer created when only
 * snapshots after its id could still refer to it ({@link ReferenceFloor}) belongs to none that
 * completed. Written with each manifest; ids are the backend's snapshot ids (materialization ids
 * under Flink's changelog backend), as the floors in file names are.
 *
 * <pre>
 * lineage := hasRun:boolean [run:UTF] count:int (mostSigBits:long leastSigBits:long lastId:long)*
 * </pre>
 */
public final class WriterLineage {

    /** More than any job restarts; bounds what a damaged manifest can make the reader allocate. */
    private static final int MAX_WRITERS = 1 << 20;

    public static final WriterLineage NONE = new WriterLineage(null, Collections.emptyMap());

    private final String run;
    private final Map<UUID, Long> lastIds;

    private WriterLineage(String run, Map<UUID, Long> lastIds) {
        this.run = run;
        this.lastIds = Collections.unmodifiableMap(new LinkedHashMap<>(lastIds));
    }

    /** The run's id ({@link LogFileName}), or null if the writer knew none. */
    public String run() {
        return run;
    }

    /**
     * The id of {@code writer}'s last snapshot in this lineage, or null if it is none of its
     * writers.
     */
    public Long lastId(UUID writer) {
        return lastIds.get(writer);
    }

    /** The lineage a writer in {@code run} continues after restoring a checkpoint of this one. */
    public WriterLineage forRun(String run) {
        return run != null && run.equals(this.run) ? this : new WriterLineage(run, Map.of());
    }

    /** The lineage of snapshot {@code id} by {@code writer}, which continues this one. */
    public WriterLineage with(UUID writer, long id) {
        Map<UUID, Long> all = new LinkedHashMap<>(lastIds);
        all.put(writer, id);
        return new WriterLineage(run, all);
    }

    public void write(DataOutputView out) throws IOException {
        out.writeBoolean(run != null);
        if (run != null) {
            out.writeUTF(run);
        }
        out.writeInt(lastIds.size());
        for (Map.Entry<UUID, Long> writer : lastIds.entrySet()) {
            out.writeLong(writer.getKey().getMostSignificantBits());
            out.writeLong(writer.getKey().getLeastSignificantBits());
            out.writeLong(writer.getValue());
        }
    }

    public static WriterLineage read(DataInputView in) throws IOException {
        String run = in.readBoolean() ? in.readUTF() : null;
        int count = in.readInt();
        if (count < 0 || count > MAX_WRITERS) {
            throw new IOException("The manifest's writer lineage lists " + count + " writers");
        }
        Map<UUID, Long> lastIds = new LinkedHashMap<>();
        for (int i = 0; i < count; i++) {
            lastIds.put(new UUID(in.readLong(), in.readLong()), in.readLong());
        }
        return new WriterLineage(run, lastIds);
    }
}
