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

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.heap.AbstractHeapPriorityQueue;

/** A priority queue state (timers); written in full with every checkpoint. */
public final class LoggedTimers {

    private final String name;
    private final KeyGroupedInternalPriorityQueue<?> queue;
    private TypeSerializer<?> elementSerializer;

    public LoggedTimers(
            String name, KeyGroupedInternalPriorityQueue<?> queue, TypeSerializer<?> serializer) {
        this.name = name;
        this.queue = queue;
        this.elementSerializer = serializer;
    }

    public String name() {
        return name;
    }

    /**
     * The queue's elements in one array copy, as Flink's heap backend takes them for a snapshot:
     * the barrier runs on the task thread, and one copy of the queue's array is the least it can do
     * there. The heap backend's queues are array heaps.
     */
    public Object[] elements() {
        return ((AbstractHeapPriorityQueue<?>) queue).toArray(new Object[0]);
    }

    public TypeSerializer<?> elementSerializer() {
        return elementSerializer;
    }

    public void updateSerializer(TypeSerializer<?> serializer) {
        this.elementSerializer = serializer;
    }
}
