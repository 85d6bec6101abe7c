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

package org.appendlog.cec.operator;

import org.appendlog.cec.CecMiniCluster;
import org.appendlog.cec.CommittedResults;
import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecWindows;

import org.apache.flink.api.common.ExecutionConfig;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.java.typeutils.GenericTypeInfo;
import org.apache.flink.api.java.typeutils.runtime.kryo.JavaSerializer;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.triggers.Trigger;
import org.apache.flink.streaming.api.windowing.windows.Window;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.io.IOException;
import java.io.ObjectInputStream;
import java.io.ObjectOutputStream;
import java.io.Serializable;
import java.util.Collection;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * A custom window assigner's window serializer is built from the job's {@code ExecutionConfig}
 * when the job runs, as Flink builds its network serializers: configuration made after {@code
 * aggregate()} counts for the windows in the log and on the network.
 */
class CecCustomWindowSerializerTest {

    private static final long EVENTS = 2_000;
    private static final int WORDS = 5;
    private static final long MILLIS_PER_EVENT = 5;
    private static final long SLOT_MILLIS = 1_000;

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = CecMiniCluster.withFourSlots();

    @TempDir File tmp;

    @Test
    void aWindowSerializerRegisteredAfterAggregateSerializesTheWindows() throws Exception {
        assertThat(TypeInformation.of(Slot.class)).isInstanceOf(GenericTypeInfo.class);
        File dir = new File(tmp, "slots");

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        SingleOutputStreamOperator<CecRecord<String, Slot, Long, Long>> cec =
                CecWindows.of(WordCountJob.words(env, EVENTS, WORDS, MILLIS_PER_EVENT, 0).keyBy(w -> w.f0))
                        .window(new Slots())
                        .aggregate(new WordCountJob.Count(), CecOptions.builder(dir.toURI().toString()).build());
        cec.addSink(new DiscardingSink<>());
        registerSlotSerializer(env);
        env.execute("slots");

        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setParallelism(2);
        registerSlotSerializer(reader);
        List<String> results =
                CommittedResults.read(dir, cec.getType(), reader).stream()
                        .map(r -> r.getKey() + "|" + r.getWindow().start + "|" + r.getValue())
                        .collect(Collectors.toList());
        assertThat(results).containsExactlyInAnyOrderElementsOf(expectedResults());
    }

    private static void registerSlotSerializer(StreamExecutionEnvironment env) {
        env.getConfig().getSerializerConfig().registerTypeWithKryoSerializer(Slot.class, JavaSerializer.class);
    }

    /** Every (word, slot) of the input with its count. */
    private static List<String> expectedResults() {
        Map<String, Long> counts = new TreeMap<>();
        for (long i = 0; i < EVENTS; i++) {
            Tuple2<String, Long> event = WordCountJob.event(i, WORDS, MILLIS_PER_EVENT);
            counts.merge(event.f0 + "|" + Slots.slotOf(event.f1).start, 1L, Long::sum);
        }
        return counts.entrySet().stream().map(e -> e.getKey() + "|" + e.getValue()).collect(Collectors.toList());
    }

    /**
     * A window whose bounds are written by its own {@code writeObject}, as {@code LongAdder}'s count
     * is: Kryo's default serializer skips its transient fields, so the job registers Flink's Kryo
     * {@link JavaSerializer} for it.
     */
    static final class Slot extends Window implements Serializable {
        private static final long serialVersionUID = 1L;

        private transient long start;
        private transient long end;

        Slot(long start, long end) {
            this.start = start;
            this.end = end;
        }

        @Override
        public long maxTimestamp() {
            return end - 1;
        }

        private void writeObject(ObjectOutputStream out) throws IOException {
            out.writeLong(start);
            out.writeLong(end);
        }

        private void readObject(ObjectInputStream in) throws IOException {
            start = in.readLong();
            end = in.readLong();
        }

        @Override
        public boolean equals(Object o) {
            return o instanceof Slot && ((Slot) o).start == start && ((Slot) o).end == end;
        }

        @Override
        public int hashCode() {
            return Long.hashCode(start) * 31 + Long.hashCode(end);
        }
    }

    /** Tumbling event-time slots whose serializer is the one the job's config gives {@link Slot}. */
    static final class Slots extends WindowAssigner<Object, Slot> {
        private static final long serialVersionUID = 1L;

        static Slot slotOf(long timestamp) {
            long start = timestamp - Math.floorMod(timestamp, SLOT_MILLIS);
            return new Slot(start, start + SLOT_MILLIS);
        }

        @Override
        public Collection<Slot> assignWindows(Object element, long timestamp, WindowAssignerContext context) {
            return Collections.singletonList(slotOf(timestamp));
        }

        @Override
        public Trigger<Object, Slot> getDefaultTrigger(StreamExecutionEnvironment env) {
            throw new UnsupportedOperationException("CEC windows fire at their end, without a trigger");
        }

        @Override
        public TypeSerializer<Slot> getWindowSerializer(ExecutionConfig config) {
            return TypeInformation.of(Slot.class).createSerializer(config.getSerializerConfig());
        }

        @Override
        public boolean isEventTime() {
            return true;
        }
    }
}
