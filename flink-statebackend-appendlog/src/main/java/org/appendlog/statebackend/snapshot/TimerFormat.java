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
import java.util.List;

/**
 * Timers (priority queue states) are small next to keyed state and change with every window, so
 * each checkpoint writes them in full, in its manifest: per queue, a count and the elements.
 */
public final class TimerFormat {

    private TimerFormat() {}

    /** Serializes every element of every queue; runs in the synchronous phase. */
    @SuppressWarnings({"unchecked", "rawtypes"})
    static byte[] write(List<LoggedTimers> queues, KeyGroupRange range) throws IOException {
        DataOutputSerializer out = new DataOutputSerializer(64);
        for (LoggedTimers timers : queues) {
            TypeSerializer serializer = timers.elementSerializer();
            int count = 0;
            for (int kg = range.getStartKeyGroup(); kg <= range.getEndKeyGroup(); kg++) {
                count += timers.queue().getSubsetForKeyGroup(kg).size();
            }
            out.writeInt(count);
            for (int kg = range.getStartKeyGroup(); kg <= range.getEndKeyGroup(); kg++) {
                for (Object element : timers.queue().getSubsetForKeyGroup(kg)) {
                    serializer.serialize(element, out);
                }
            }
        }
        return out.getCopyOfBuffer();
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
