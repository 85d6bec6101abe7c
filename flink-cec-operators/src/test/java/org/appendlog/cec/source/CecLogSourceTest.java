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

package org.appendlog.cec.source;

import org.appendlog.cec.CecMiniCluster;
import org.appendlog.cec.WordCountJob;
import org.appendlog.cec.api.CecConfigOptions;
import org.appendlog.cec.api.CecOptions;
import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecRecordKind;
import org.appendlog.cec.api.CecRecordSerializer;
import org.appendlog.cec.api.CecRecordTypeInfo;
import org.appendlog.cec.api.CecWindows;
import org.appendlog.cec.log.CommitMarker;
import org.appendlog.cec.log.ForwardLogReader;
import org.appendlog.cec.log.LogPosition;
import org.appendlog.cec.log.LogRecord;
import org.appendlog.cec.log.LogPermissions;
import org.appendlog.cec.log.LogWriter;
import org.appendlog.cec.log.PersistedStream;
import org.appendlog.cec.operator.LoggedInput;
import org.appendlog.cec.source.CecLogSource;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.serialization.SerializerConfigImpl;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.GenericTypeInfo;
import org.apache.flink.configuration.MemorySize;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputSerializer;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;
import org.apache.flink.test.junit5.MiniClusterExtension;

import com.esotericsoftware.kryo.Kryo;
import com.esotericsoftware.kryo.Serializer;
import com.esotericsoftware.kryo.io.Input;
import com.esotericsoftware.kryo.io.Output;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;
import org.junit.jupiter.api.io.TempDir;

import java.io.File;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.EnumSet;
import java.util.List;
import java.util.Set;
import java.util.stream.Collectors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Reading a persisted stream back with {@link CecLogSource} from a timestamp. */
class CecLogSourceTest {

    @RegisterExtension
    static final MiniClusterExtension MINI_CLUSTER = CecMiniCluster.withFourSlots();

    @TempDir File tmp;

    @Test
    void readingFromATimestampReturnsExactlyTheRecordsAtOrAfterIt() throws Exception {
        String path = new File(tmp, "stream").toURI().toString();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        env.enableCheckpointing(100);
        // Small segments and a dense index, so that seeks cross segment and index boundaries.
        CecOptions options =
                CecOptions.builder(path)
                        .period(Duration.ofMillis(20))
                        .slowThreshold(Duration.ofMillis(50))
                        .set(CecConfigOptions.LOG_SEGMENT_SIZE, MemorySize.parse("16kb"))
                        .set(CecConfigOptions.LOG_INDEX_INTERVAL, MemorySize.parse("512b"))
                        .build();
        DataStream<CecRecord<String, TimeWindow, Long, Long>> counts =
                WordCountJob.cecCounts(
                        WordCountJob.words(env, 20_000, 30, 5, 20_000),
                        WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1)),
                        options);
        TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type = counts.getType();
        counts.addSink(new DiscardingSink<>());
        env.execute("persist");

        // The persisted stream, read directly: every kind present, timestamps ordered per subtask.
        List<String> everything = new ArrayList<>();
        Set<CecRecordKind> kinds = EnumSet.noneOf(CecRecordKind.class);
        long inputRecords = 0;
        FileSystem fs = FileSystem.getLocalFileSystem();
        @SuppressWarnings("unchecked")
        CecRecordSerializer<String, TimeWindow, Long, Long> serializer =
                (CecRecordSerializer<String, TimeWindow, Long, Long>) type.createSerializer(new SerializerConfigImpl());
        List<Path> subtasks = PersistedStream.subtaskDirectories(fs, new Path(path));
        assertThat(subtasks).hasSize(2);
        for (Path dir : subtasks) {
            LogPosition end = PersistedStream.committedEnd(fs, dir).orElseThrow();
            assertThat(PersistedStream.chainEndingAt(fs, dir, end)).as("segments of %s", dir).hasSizeGreaterThan(3);
            long last = Long.MIN_VALUE;
            try (ForwardLogReader reader = new ForwardLogReader(fs, PersistedStream.chainEndingAt(fs, dir, end), Long.MIN_VALUE, null)) {
                for (LogRecord r = reader.next(); r != null; r = reader.next()) {
                    if (LoggedInput.isInput(r.payload())) {
                        inputRecords++;
                        continue;
                    }
                    CecRecord<String, TimeWindow, Long, Long> rec = serializer.deserialize(new DataInputDeserializer(r.payload()));
                    assertThat(rec.getTimestamp()).isEqualTo(r.timestamp()).isGreaterThanOrEqualTo(last);
                    last = rec.getTimestamp();
                    kinds.add(rec.getKind());
                    everything.add(rec.toString());
                }
            }
        }
        assertThat(kinds).containsExactlyInAnyOrder(CecRecordKind.OPEN, CecRecordKind.CHECK, CecRecordKind.RESULT);
        // Eventual mode logs the input in the same stream; the source returns exactly the tuples.
        assertThat(inputRecords).as("INPUT records in the stream").isEqualTo(20_000);

        List<String> all = read(path, type, Long.MIN_VALUE);
        assertThat(all).containsExactlyInAnyOrderElementsOf(everything);
        List<Long> timestamps = all.stream().map(CecLogSourceTest::timestampOf).sorted().collect(Collectors.toList());
        long first = timestamps.get(0);
        long lastTs = timestamps.get(timestamps.size() - 1);
        for (long from : new long[] {first, timestamps.get(timestamps.size() / 3), timestamps.get(timestamps.size() / 3) + 1,
                lastTs - 1500, lastTs, lastTs + 1}) {
            List<String> expected = all.stream().filter(r -> timestampOf(r) >= from).sorted().collect(Collectors.toList());
            assertThat(read(path, type, from)).as("records from t=%d", from).isEqualTo(expected);
        }
    }

    /** The operator's own log records (a kind code past RESULT) are not CEC tuples: readers skip them. */
    @Test
    void recordsOfOtherKindsThanTheTuplesAreSkipped() throws Exception {
        String path = new File(tmp, "internal").toURI().toString();
        TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type =
                WordCountJob.cecCounts(
                                WordCountJob.words(StreamExecutionEnvironment.getExecutionEnvironment(), 1, 1, 1, 0),
                                WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1)),
                                CecOptions.builder(path).build())
                        .getType();
        @SuppressWarnings("unchecked")
        CecRecordSerializer<String, TimeWindow, Long, Long> serializer =
                (CecRecordSerializer<String, TimeWindow, Long, Long>) type.createSerializer(new SerializerConfigImpl());
        FileSystem fs = FileSystem.getLocalFileSystem();
        Path dir = PersistedStream.subtaskDirectory(new Path(path), 0);
        List<String> tuples = new ArrayList<>();
        DataOutputSerializer payload = new DataOutputSerializer(64);
        try (LogWriter log = new LogWriter(fs, dir, 0, 0, null, 4096, 256, LogPermissions.of((short) 0700, (short) 0600))) {
            for (int i = 0; i < 50; i++) {
                TimeWindow window = new TimeWindow(i * 1000L, i * 1000L + 2000);
                CecRecord<String, TimeWindow, Long, Long> tuple =
                        i % 2 == 0 ? CecRecord.open("w" + i, window, i, 1) : CecRecord.result("w" + i, window, i, 0, 3, 3L);
                payload.clear();
                serializer.serialize(tuple, payload);
                log.append(i, payload.getSharedBuffer(), payload.length());
                tuples.add(tuple.toString());
                byte[] internal = {(byte) (CecRecordKind.RESULT.code() + 1), 1, 2, 3};
                log.append(i, internal, internal.length);
            }
            log.sync();
            PersistedStream.commit(fs, dir, new CommitMarker(1, log.position(), "writer"));
        }
        Collections.sort(tuples);
        assertThat(read(path, type, Long.MIN_VALUE)).isEqualTo(tuples);
    }

    @Test
    void aFreshStartRefusesADirectoryThatHoldsACommittedStream() throws Exception {
        String path = new File(tmp, "reused").toURI().toString();
        for (int run = 0; run < 2; run++) {
            StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
            env.setParallelism(1);
            env.enableCheckpointing(100);
            env.setRestartStrategy(org.apache.flink.api.common.restartstrategy.RestartStrategies.noRestart());
            WordCountJob.cecCounts(
                            WordCountJob.words(env, 2_000, 5, 5, 0),
                            WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1)),
                            CecOptions.builder(path).build())
                    .addSink(new DiscardingSink<>());
            if (run == 0) {
                env.execute("first");
            } else {
                assertThatThrownBy(() -> env.execute("second"))
                        .hasStackTraceContaining("already holds a committed stream")
                        .hasStackTraceContaining("subtask-0000");
            }
        }
    }

    @Test
    void readsBackWithTheJobsKryoRegistrations() throws Exception {
        String path = new File(tmp, "kryo").toURI().toString();
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        registerTaggedSerializer(env);
        DataStream<CecRecord<String, TimeWindow, Long, Tagged>> tagged =
                CecWindows.of(WordCountJob.words(env, 2_000, 5, 5, 0).keyBy(w -> w.f0))
                        .window(WordCountJob.windows(Duration.ofSeconds(2), Duration.ofSeconds(1)))
                        .aggregate(new TaggedCount(), CecOptions.builder(path).build());
        assertThat(((CecRecordTypeInfo<?, ?, ?, ?>) tagged.getType()).getValueType()).isInstanceOf(GenericTypeInfo.class);
        List<String> live = new ArrayList<>();
        CecWindows.results(tagged).map(CecLogSourceTest::describe).executeAndCollect().forEachRemaining(live::add);
        Collections.sort(live);

        StreamExecutionEnvironment reader = StreamExecutionEnvironment.getExecutionEnvironment();
        reader.setParallelism(2);
        registerTaggedSerializer(reader);
        List<String> persisted = new ArrayList<>();
        reader.fromSource(CecLogSource.of(path, tagged.getType(), Long.MIN_VALUE), WatermarkStrategy.noWatermarks(), "history")
                .filter(CecRecord::isResult)
                .map(CecLogSourceTest::describe)
                .executeAndCollect()
                .forEachRemaining(persisted::add);
        Collections.sort(persisted);

        assertThat(live).hasSizeGreaterThan(10);
        assertThat(persisted).isEqualTo(live);
    }

    private static void registerTaggedSerializer(StreamExecutionEnvironment env) {
        env.getConfig().getSerializerConfig().registerTypeWithKryoSerializer(Tagged.class, TaggedSerializer.class);
    }

    private static String describe(CecRecord<String, TimeWindow, Long, Tagged> result) {
        return result.getKey() + "|" + result.getWindow().getStart() + "|" + result.getValue().count;
    }

    /** A count that Flink serializes with Kryo (no default constructor, so no POJO). */
    public static final class Tagged {
        final long count;

        Tagged(long count) {
            this.count = count;
        }
    }

    /**
     * Kryo serializer registered for {@link Tagged}: Kryo writes a registered class as its
     * registration id, which a Kryo without the registration cannot resolve.
     */
    public static final class TaggedSerializer extends Serializer<Tagged> implements java.io.Serializable {
        @Override
        public void write(Kryo kryo, Output output, Tagged tagged) {
            output.writeLong(tagged.count, true);
        }

        @Override
        public Tagged read(Kryo kryo, Input input, Class<Tagged> type) {
            return new Tagged(input.readLong(true));
        }
    }

    /** Counts elements into a {@link Tagged}. */
    static final class TaggedCount extends WordCountJob.Counting<Tagged> {
        @Override
        public Tagged getResult(Long acc) {
            return new Tagged(acc);
        }
    }

    private static long timestampOf(String record) {
        int at = record.indexOf(", t=") + 4;
        return Long.parseLong(record.substring(at, record.indexOf(',', at)));
    }

    private static List<String> read(String path, TypeInformation<CecRecord<String, TimeWindow, Long, Long>> type, long from)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        List<String> out = new ArrayList<>();
        env.fromSource(CecLogSource.of(path, type, from), WatermarkStrategy.noWatermarks(), "history")
                .map((MapFunction<CecRecord<String, TimeWindow, Long, Long>, String>) CecRecord::toString)
                .executeAndCollect()
                .forEachRemaining(out::add);
        Collections.sort(out);
        return out;
    }
}
