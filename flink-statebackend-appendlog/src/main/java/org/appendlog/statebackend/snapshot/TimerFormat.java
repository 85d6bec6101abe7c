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

import org.appendlog.statebackend.tracking.LoggedTimers;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;
import org.apache.flink.streaming.api.operators.TimerHeapInternalTimer;
import org.apache.flink.streaming.api.operators.TimerSerializer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * Timers (priority queue states) change with every window, so each checkpoint writes them in
 * full, in its manifest. Per queue, a tag byte says how:
 *
 * <ul>
 *   <li>{@link #GROUPED_TIMERS}: Flink's timers, grouped by timestamp and namespace. The timers of
 *       one window share both, so each group's timestamp and namespace are written once, then the
 *       keys: a window's timers take about a third of the bytes, and of the serialization.
 *   <li>{@link #ELEMENTS}: a count and the elements, each with the queue's serializer: other
 *       element types, and timers with too few in a group (say, one per key at its own time).
 * </ul>
 *
 * Manifests of version 1 hold untagged element lists.
 */
public final class TimerFormat {

    static final byte ELEMENTS = 0;
    static final byte GROUPED_TIMERS = 1;

    private TimerFormat() {}

    /**
     * The elements of every queue as of the barrier: only their references are copied there, as
     * Flink's heap backend does (a timer does not change once queued), and they are serialized
     * in the asynchronous phase.
     */
    static final class Captured {
        private final List<TypeSerializer<?>> serializers = new ArrayList<>();
        private final List<Object[]> elements = new ArrayList<>();

        /**
         * Per queue, its tag and elements; {@code expectedBytes} (the last checkpoint's size)
         * sizes the buffer, so that it need not double its way there.
         */
        @SuppressWarnings({"unchecked", "rawtypes"})
        byte[] toBytes(int expectedBytes) throws IOException {
            DataOutputSerializer out =
                    new DataOutputSerializer(Math.max(64, expectedBytes + expectedBytes / 8));
            for (int q = 0; q < elements.size(); q++) {
                TypeSerializer serializer = serializers.get(q);
                Object[] queue = elements.get(q);
                Map<TimerGroup, List<Object>> groups =
                        serializer instanceof TimerSerializer ? TimerGroup.of(queue) : null;
                if (groups != null) {
                    writeGroups((TimerSerializer) serializer, groups, out);
                } else {
                    out.writeByte(ELEMENTS);
                    out.writeInt(queue.length);
                    for (Object element : queue) {
                        serializer.serialize(element, out);
                    }
                }
            }
            return out.getCopyOfBuffer();
        }
    }

    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void writeGroups(
            TimerSerializer serializer,
            Map<TimerGroup, List<Object>> groups,
            DataOutputSerializer out)
            throws IOException {
        TypeSerializer keys = serializer.getKeySerializer();
        TypeSerializer namespaces = serializer.getNamespaceSerializer();
        out.writeByte(GROUPED_TIMERS);
        out.writeInt(groups.size());
        for (Map.Entry<TimerGroup, List<Object>> group : groups.entrySet()) {
            out.writeLong(group.getKey().timestamp);
            namespaces.serialize(group.getKey().namespace, out);
            out.writeInt(group.getValue().size());
            for (Object key : group.getValue()) {
                keys.serialize(key, out);
            }
        }
    }

    /** The timestamp and namespace that the timers of one group share. */
    private static final class TimerGroup {
        final long timestamp;
        final Object namespace;

        TimerGroup(long timestamp, Object namespace) {
            this.timestamp = timestamp;
            this.namespace = namespace;
        }

        /**
         * The keys of {@code timers} by group, in the order the groups first appear; null if the
         * groups are too many to pay (more than half as many as the timers).
         */
        static Map<TimerGroup, List<Object>> of(Object[] timers) {
            Map<TimerGroup, List<Object>> groups = new LinkedHashMap<>();
            List<Object> last = null;
            TimerGroup lastGroup = null;
            for (Object element : timers) {
                TimerHeapInternalTimer<?, ?> timer = (TimerHeapInternalTimer<?, ?>) element;
                if (lastGroup == null
                        || lastGroup.timestamp != timer.getTimestamp()
                        || !lastGroup.namespace.equals(timer.getNamespace())) {
                    lastGroup = new TimerGroup(timer.getTimestamp(), timer.getNamespace());
                    last = groups.computeIfAbsent(lastGroup, g -> new ArrayList<>());
                    if (groups.size() > timers.length / 2 + 1) {
                        return null;
                    }
                }
                last.add(timer.getKey());
            }
            return groups;
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof TimerGroup
                    && ((TimerGroup) o).timestamp == timestamp
                    && ((TimerGroup) o).namespace.equals(namespace);
        }

        @Override
        public int hashCode() {
            return 31 * Long.hashCode(timestamp) + namespace.hashCode();
        }
    }

    /** Takes the queues' elements; runs in the synchronous phase. */
    static Captured capture(List<LoggedTimers> queues) {
        Captured captured = new Captured();
        for (LoggedTimers timers : queues) {
            captured.serializers.add(timers.elementSerializer().duplicate());
            captured.elements.add(timers.elements());
        }
        return captured;
    }

    /**
     * Reads the elements of the queues in {@code order} and adds those of owned key groups.
     *
     * @param manifestVersion the version of the manifest that holds {@code timers}
     */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void restore(
            byte[] timers,
            int manifestVersion,
            List<TypeSerializer<?>> serializers,
            List<KeyGroupedInternalPriorityQueue<?>> queues,
            KeyGroupRange owned,
            int numberOfKeyGroups)
            throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(timers);
        for (int q = 0; q < queues.size(); q++) {
            TypeSerializer serializer = serializers.get(q);
            KeyGroupedInternalPriorityQueue queue = queues.get(q);
            byte tag = manifestVersion < 2 ? ELEMENTS : in.readByte();
            if (tag == GROUPED_TIMERS) {
                if (!(serializer instanceof TimerSerializer)) {
                    throw new IOException(
                            "Timers of queue "
                                    + q
                                    + " were written grouped, but its serializer is a "
                                    + serializer.getClass().getName());
                }
                readGroups(in, (TimerSerializer) serializer, queue, owned, numberOfKeyGroups);
            } else if (tag == ELEMENTS) {
                int count = in.readInt();
                for (int i = 0; i < count; i++) {
                    Object element = serializer.deserialize(in);
                    if (owns(owned, ((Keyed<?>) element).getKey(), numberOfKeyGroups)) {
                        queue.add(element);
                    }
                }
            } else {
                throw new IOException("Unknown timer format " + tag + " of queue " + q);
            }
        }
    }

    /** Reads what {@link #writeGroups} wrote and adds the timers of owned key groups. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    private static void readGroups(
            DataInputDeserializer in,
            TimerSerializer serializer,
            KeyGroupedInternalPriorityQueue queue,
            KeyGroupRange owned,
            int numberOfKeyGroups)
            throws IOException {
        TypeSerializer keys = serializer.getKeySerializer();
        TypeSerializer namespaces = serializer.getNamespaceSerializer();
        int groups = in.readInt();
        for (int g = 0; g < groups; g++) {
            long timestamp = in.readLong();
            Object namespace = namespaces.deserialize(in);
            int count = in.readInt();
            for (int i = 0; i < count; i++) {
                Object key = keys.deserialize(in);
                if (owns(owned, key, numberOfKeyGroups)) {
                    Object own =
                            namespaces.isImmutableType() ? namespace : namespaces.copy(namespace);
                    queue.add(new TimerHeapInternalTimer<>(timestamp, key, own));
                }
            }
        }
    }

    private static boolean owns(KeyGroupRange owned, Object key, int numberOfKeyGroups) {
        return owned.contains(KeyGroupRangeAssignment.assignToKeyGroup(key, numberOfKeyGroups));
    }
}
