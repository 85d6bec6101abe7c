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

package org.appendlog.statebackend.tracking;

import org.apache.flink.annotation.VisibleForTesting;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.InternalKeyContext;

import javax.annotation.Nullable;

import java.io.IOException;
import java.util.HashSet;
import java.util.Set;
import java.util.concurrent.Executor;

/**
 * What changed since the last capture, on the task thread. A write of an immutable value is
 * logged: serialized into the {@link ChangeBuffer} as it happens, since the value cannot change
 * any more. An entry whose value is mutable is marked instead (it can change in place after any
 * read, unseen), and the checkpoint looks it up at the barrier; a key marked a million times
 * between two checkpoints is one mark.
 */
public final class ChangeTracker {

    private final InternalKeyContext<?> keyContext;
    private final ChangeBuffer buffer;
    private Set<EntryRef> marked = new HashSet<>();
    private EntryRef lastMarked;
    /**
     * Nothing is tracked while the state keeps turning over between checkpoints: every
     * checkpoint appends all live entries then, and would throw the tracked changes away.
     */
    private boolean paused;
    /** Intervals that went untracked, or go now: a metric. */
    private volatile long untrackedIntervals;

    /**
     * @param deduplicator deduplicates the logged writes off the task thread, as they accumulate
     */
    public ChangeTracker(
            InternalKeyContext<?> keyContext, long bufferLimitBytes, Executor deduplicator) {
        this.keyContext = keyContext;
        this.buffer = new ChangeBuffer(bufferLimitBytes, deduplicator);
    }

    /** Marks the entry of the current key under {@code namespace} in state {@code stateId}. */
    public void markCurrentKey(int stateId, Object namespace) {
        if (paused) {
            return;
        }
        Object key = keyContext.getCurrentKey();
        if (lastMarked == null || !lastMarked.sameAs(stateId, key, namespace)) {
            lastMarked =
                    new EntryRef(stateId, key, namespace, keyContext.getCurrentKeyGroupIndex());
            marked.add(lastMarked);
        }
    }

    public void mark(EntryRef entry) {
        if (!paused) {
            marked.add(entry);
        }
    }

    /** Logs the new, immutable value (null: removal) of an entry. */
    @SuppressWarnings("unchecked")
    void log(
            int stateId,
            int keyGroup,
            Object key,
            Object namespace,
            @Nullable Object value,
            TypeSerializer<?> keySerializer,
            TypeSerializer<?> namespaceSerializer,
            TypeSerializer<?> valueSerializer)
            throws IOException {
        if (paused) {
            return;
        }
        buffer.write(
                stateId,
                keyGroup,
                key,
                namespace,
                value,
                (TypeSerializer<Object>) keySerializer,
                (TypeSerializer<Object>) namespaceSerializer,
                (TypeSerializer<Object>) valueSerializer);
    }

    /**
     * Stops tracking, at a barrier, right after {@link #drainMarked} and {@link #drainLogged}: a
     * checkpoint that ends an interval without tracking must append all live entries. Paused for
     * {@code oneInterval}, the buffer keeps its pooled chunks for the tracked interval after it;
     * for longer, it lets that go.
     */
    public void pause(boolean oneInterval) {
        paused = true;
        untrackedIntervals++; // the task thread's alone

        buffer.keepSpares(oneInterval);
    }

    /** Tracks again from this barrier on. */
    public void resume() {
        paused = false;
        buffer.keepSpares(true);
    }

    /** Intervals that went untracked since the backend started, the current one included. */
    public long untrackedIntervals() {
        return untrackedIntervals;
    }

    /** Whether the changes since the last barrier went untracked. */
    public boolean isPaused() {
        return paused;
    }

    /** Hands over the marked entries and starts a new, empty set. */
    public Set<EntryRef> drainMarked() {
        Set<EntryRef> drained = marked;
        marked = new HashSet<>();
        lastMarked = null;
        return drained;
    }

    /** Hands over the logged writes and starts a new, empty buffer. */
    public IntervalWrites drainLogged() {
        return buffer.drain();
    }

    @VisibleForTesting
    ChangeBuffer buffer() {
        return buffer;
    }

    /** Bytes of the writes logged since the last capture. */
    public long bufferedBytes() {
        return buffer.bytes();
    }

    /** Bytes of the heap that the change buffer holds, its pooled chunks included. */
    public long bufferHeapBytes() {
        return buffer.heapBytes();
    }

    /** Marked entries and logged writes since the last capture. */
    public int size() {
        return marked.size() + buffer.recordCount();
    }
}
