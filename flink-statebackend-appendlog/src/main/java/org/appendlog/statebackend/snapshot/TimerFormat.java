package org.appendlog.statebackend.snapshot;

import org.appendlog.statebackend.tracking.LoggedTimers;

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.runtime.state.KeyGroupRange;
import org.apache.flink.runtime.state.KeyGroupRangeAssignment;
import org.apache.flink.runtime.state.KeyGroupedInternalPriorityQueue;
import org.apache.flink.runtime.state.Keyed;

import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Timers (priority queue states) are small next to keyed state and change with every window, so
 * each checkpoint writes them in full, in its manifest: per queue, a count and the elements.
 */
public final class TimerFormat {

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
         * Per queue, a count and the elements; {@code expectedBytes} (the last checkpoint's size)
         * sizes the buffer, so that it need not double its way there.
         */
        @SuppressWarnings({"unchecked", "rawtypes"})
        byte[] toBytes(int expectedBytes) throws IOException {
            DataOutputSerializer out =
                    new DataOutputSerializer(Math.max(64, expectedBytes + expectedBytes / 8));
            for (int q = 0; q < elements.size(); q++) {
                TypeSerializer serializer = serializers.get(q);
                out.writeInt(elements.get(q).length);
                for (Object element : elements.get(q)) {
                    serializer.serialize(element, out);
                }
            }
            return out.getCopyOfBuffer();
        }
    }

    /** Takes the queues' elements; runs in the synchronous phase. */
    static Captured capture(List<LoggedTimers> queues, KeyGroupRange range) {
        Captured captured = new Captured();
        for (LoggedTimers timers : queues) {
            List<Object> elements = new ArrayList<>();
            for (int kg = range.getStartKeyGroup(); kg <= range.getEndKeyGroup(); kg++) {
                elements.addAll(timers.queue().getSubsetForKeyGroup(kg));
            }
            captured.serializers.add(timers.elementSerializer().duplicate());
            captured.elements.add(elements.toArray());
        }
        return captured;
    }

    /** Reads the elements of the queues in {@code order} and adds those of owned key groups. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    public static void restore(
            byte[] timers,
            List<TypeSerializer<?>> serializers,
            List<KeyGroupedInternalPriorityQueue<?>> queues,
            KeyGroupRange owned,
            int numberOfKeyGroups)
            throws IOException {
        DataInputDeserializer in = new DataInputDeserializer(timers);
        for (int q = 0; q < queues.size(); q++) {
            TypeSerializer serializer = serializers.get(q);
            KeyGroupedInternalPriorityQueue queue = queues.get(q);
            int count = in.readInt();
            for (int i = 0; i < count; i++) {
                Object element = serializer.deserialize(in);
                Object key = ((Keyed<?>) element).getKey();
                if (owned.contains(
                        KeyGroupRangeAssignment.assignToKeyGroup(key, numberOfKeyGroups))) {
                    queue.add(element);
                }
            }
        }
    }
}
