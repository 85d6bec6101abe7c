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

import org.appendlog.statebackend.log.BatchBuilder;
import org.appendlog.statebackend.log.RecordFormat;
import org.appendlog.statebackend.tracking.IntervalWrites;
import org.appendlog.statebackend.tracking.EntryRef;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataOutputSerializer;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.concurrent.Executor;

/**
 * The changes of one synchronous phase, as log records holding the values as of the barrier: the
 * writes the {@link org.appendlog.statebackend.tracking.ChangeTracker} logged, deduplicated in the
 * asynchronous phase ({@link #materialize}), followed by the marked entries, looked up and
 * serialized at the barrier (so a mark, which holds the barrier's value, wins over a logged write
 * of the same entry). It is kept until a checkpoint that contains it completes, so that a failed
 * or late checkpoint never loses changes: the next batch simply carries it again.
 */
final class Capture {

    final long checkpointId;
    /**
     * The entries this capture changed, as the barrier judged them (an estimate, or the count if
     * it needed that); task thread.
     */
    long changed;
    /**
     * Whether an asynchronous phase took it up to write (and so recycles its buffers); guarded by
     * the {@link CheckpointLineage}.
     */
    boolean claimed;
    private final BatchBuilder marked;
    private final DataOutputSerializer keyScratch = new DataOutputSerializer(64);
    private final DataOutputSerializer valueScratch = new DataOutputSerializer(256);
    /** Volatile: the barrier asks whether it lost records while an asynchronous phase reads it. */
    @Nullable private volatile IntervalWrites logged;
    @Nullable private BatchBuilder records;

    Capture(long checkpointId, BatchBuilder marked) {
        this.checkpointId = checkpointId;
        this.marked = marked;
    }

    /** Serializers for records encoded off the task thread: duplicates, not shared. */
    static final class Serializers {
        final TypeSerializer<Object> key;
        final TypeSerializer<Object> namespace;
        final TypeSerializer<Object> value;

        Serializers(
                TypeSerializer<Object> key,
                TypeSerializer<Object> namespace,
                TypeSerializer<Object> value) {
            this.key = key.duplicate();
            this.namespace = namespace.duplicate();
            this.value = value.duplicate();
        }
    }

    void logged(IntervalWrites changes) {
        this.logged = changes;
        this.changed = marked.recordCount() + changes.distinctEstimate();
    }

    /** The entries changed at least: the marked ones and those already deduplicated. */
    long changedAtLeast() {
        return marked.recordCount() + logged.distinctAtLeast();
    }

    /**
     * Counts the entries changed exactly, which deduplicates the logged writes on this thread as
     * far as the background thread has not. Before any asynchronous phase took the capture up.
     */
    long countChanged() {
        changed = marked.recordCount() + logged.distinctCount();
        return changed;
    }

    /** Encodes a marked {@code entry} with {@code value}, or a tombstone if the value is null. */
    void add(EntryRef entry, Serializers serializers, @Nullable Object value) throws IOException {
        keyScratch.clear();
        serializers.key.serialize(entry.key(), keyScratch);
        serializers.namespace.serialize(entry.namespace(), keyScratch);
        byte[] valueBytes = null;
        int valueLength = 0;
        if (value != null) {
            valueScratch.clear();
            serializers.value.serialize(value, valueScratch);
            valueBytes = valueScratch.getSharedBuffer();
            valueLength = valueScratch.length();
        }
        RecordFormat.write(
                        marked,
                        entry.keyGroup(),
                        checkpointId,
                        entry.stateId(),
                        keyScratch.getSharedBuffer(),
                        0,
                        keyScratch.length(),
                        valueBytes,
                        0,
                        valueLength);
    }

    /** The capture's records; {@link #materialize} first. */
    BatchBuilder records() {
        return records;
    }

    /**
     * Builds the records: the latest logged write of each entry, then the marked entries.
     *
     * @param expectedBytes per key group, the bytes an earlier batch took, or null: the starting
     *     sizes of the new batch's buffers
     */
    synchronized void materialize(@Nullable int[] expectedBytes) throws IOException {
        if (records != null) {
            return;
        }
        if (logged == null || logged.recordCount() == 0) {
            records = marked;
        } else {
            BatchBuilder all =
                    new BatchBuilder(
                            checkpointId, marked.keyGroups(), marked.stateNames(), expectedBytes);
            IOException[] failure = {null};
            logged.forEachLatest(
                    (buffer, at, length) -> {
                        if (failure[0] == null) {
                            try {
                                copy(buffer, at, all);
                            } catch (IOException e) {
                                failure[0] = e;
                            }
                        }
                    });
            if (failure[0] != null) {
                throw failure[0];
            }
            all.takeAll(marked);
            records = all;
        }
        recycleLogged();
    }

    /**
     * Whether logged changes were lost (deduplicating them failed): only a checkpoint that
     * appends every live entry can stand for them.
     */
    boolean lostChanges() {
        IntervalWrites changes = logged;
        return changes != null && changes.lostRecords();
    }

    /**
     * No checkpoint will write the logged changes: their sorting stops, and their buffers go back
     * for reuse on {@code background}, behind the chunks it is still sorting (the caller would
     * wait for those).
     */
    void discardLogged(Executor background) {
        IntervalWrites changes = logged;
        if (changes != null) {
            changes.discard();
            background.execute(this::recycleLogged);
        }
    }

    /**
     * Returns the logged changes' buffers for reuse: once materialized, or when no checkpoint will
     * write them.
     */
    synchronized void recycleLogged() {
        if (logged != null) {
            logged.recycle();
            logged = null;
        }
    }

    private void copy(byte[] buffer, int at, BatchBuilder out) throws IOException {
        int valueLength = IntervalWrites.valueLength(buffer, at);
        RecordFormat.write(
                out,
                IntervalWrites.keyGroup(buffer, at),
                checkpointId,
                IntervalWrites.stateId(buffer, at),
                buffer,
                IntervalWrites.keyOffset(at),
                IntervalWrites.keyLength(buffer, at),
                valueLength < 0 ? null : buffer,
                IntervalWrites.valueOffset(buffer, at),
                Math.max(0, valueLength));
    }
}
