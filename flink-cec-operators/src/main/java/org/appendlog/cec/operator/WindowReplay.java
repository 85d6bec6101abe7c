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

import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecRecordKind;
import org.appendlog.cec.api.CecRecordSerializer;
import org.appendlog.cec.log.ForwardLogReader;
import org.appendlog.cec.log.LogPosition;
import org.appendlog.cec.log.LogRecord;
import org.appendlog.cec.log.PersistedStream;
import org.appendlog.cec.log.SegmentExtent;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.Window;

import java.io.IOException;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.function.Predicate;

/**
 * The recovery of a checkpoint whose stream logs its input (eventual and open-only mode): reads
 * the stream forward from the checkpoint's recovery horizon, the oldest footprint of a window open
 * there, to its end. An OPEN or CHECK sets its window's state, a RESULT closes the window, and an
 * INPUT record is added to those of its windows that are open in the replay. A footprint includes
 * every input logged before it and none after, so at the end each window holds exactly its state
 * at the checkpoint. Windows first seen after their INPUTs closed before the end and are ignored.
 * Nothing is emitted: what the replayed input produced is in the log already.
 *
 * <p>After a rescale a subtask keeps only the windows of its own keys: it replays only their
 * input, but follows every window of the stream to check the checkpoint's window count.
 */
final class WindowReplay<K, IN, W extends Window, ACC> {

    /** In footprint order: a window moves to the end at each footprint. */
    private final LinkedHashMap<OpenWindow.Id<K, W>, OpenWindow<K, W, ACC>> windows = new LinkedHashMap<>();
    private final Predicate<K> owned;
    private long recordsScanned;
    private long inputsReplayed;
    private long created;

    private WindowReplay(Predicate<K> owned, long firstCreation) {
        this.owned = owned;
        this.created = firstCreation;
    }

    /**
     * @param owned whether a key is this subtask's (after a rescale, its key groups)
     * @param firstCreation the creation number of the first window rebuilt
     */
    static <K, IN, W extends Window, ACC> WindowReplay<K, IN, W, ACC> replay(
            FileSystem fs,
            Path directory,
            CheckpointedPosition position,
            CecRecordSerializer<K, W, ACC, ?> serializer,
            LoggedInput<K, IN> input,
            WindowAssigner<? super IN, W> assigner,
            AggregateFunction<IN, ACC, ?> aggregate,
            Predicate<K> owned,
            long firstCreation)
            throws IOException {
        WindowReplay<K, IN, W, ACC> replay = new WindowReplay<>(owned, firstCreation);
        ReplayedClock clock = new ReplayedClock();
        DataInputDeserializer in = new DataInputDeserializer();
        List<SegmentExtent> chain = PersistedStream.chainFrom(fs, directory, position.horizon, position.end);
        if (chain.isEmpty()) {
            throw new IOException(
                    "CEC recovery replay of " + directory + ": the recovery horizon " + position.horizon
                            + " is not on the stream that ends at " + position.end + "; the log is incomplete");
        }
        try (ForwardLogReader reader = new ForwardLogReader(fs, chain, Long.MIN_VALUE, position.horizon)) {
            for (LogRecord record = reader.next(); record != null; record = reader.next()) {
                replay.recordsScanned++;
                if (LoggedInput.isInput(record.payload())) {
                    input.read(record.payload());
                    if (!owned.test(input.key)) {
                        continue;
                    }
                    clock.time = input.processingTime;
                    for (W w : assigner.assignWindows(input.element, input.timestamp, clock)) {
                        OpenWindow<K, W, ACC> window = replay.windows.get(new OpenWindow.Id<>(input.key, w));
                        if (window != null) {
                            window.accumulator = aggregate.add(input.element, window.accumulator);
                            window.count++;
                        }
                    }
                    replay.inputsReplayed++;
                    continue;
                }
                in.setBuffer(record.payload());
                CecRecord<K, W, ACC, ?> tuple = serializer.deserialize(in);
                replay.windows.remove(new OpenWindow.Id<>(tuple.getKey(), tuple.getWindow()));
                if (tuple.getKind() != CecRecordKind.RESULT) {
                    // A CHECK marks its window slow (the eventual policy checks only slow windows).
                    long openTime = tuple.getKind() == CecRecordKind.OPEN ? record.timestamp() : Long.MIN_VALUE;
                    // The segment of the record just read: the reader stays in it until the next call.
                    LogPosition at = new LogPosition(reader.position().segment(), record.offset());
                    OpenWindow<K, W, ACC> window =
                            OpenWindow.rebuilt(tuple, replay.created++, aggregate.createAccumulator(), at, openTime);
                    replay.windows.put(window.id(), window);
                }
            }
        }
        if (replay.windows.size() != position.openWindows) {
            throw new IOException(
                    "CEC recovery replay of " + directory + " from " + position.horizon + " to " + position.end
                            + " found " + replay.windows.size() + " open windows where the checkpoint recorded "
                            + position.openWindows + "; the log is incomplete or damaged");
        }
        return replay;
    }

    /** The windows of owned keys open at the checkpoint, oldest footprint first. */
    List<OpenWindow<K, W, ACC>> windows() {
        List<OpenWindow<K, W, ACC>> result = new ArrayList<>(windows.size());
        for (OpenWindow<K, W, ACC> window : windows.values()) {
            if (owned.test(window.key)) {
                result.add(window);
            }
        }
        return result;
    }

    long recordsScanned() {
        return recordsScanned;
    }

    long inputsReplayed() {
        return inputsReplayed;
    }

    /** Gives the window assigner the processing time that it saw when the input was first processed. */
    private static final class ReplayedClock extends WindowAssigner.WindowAssignerContext {
        long time;

        @Override
        public long getCurrentProcessingTime() {
            return time;
        }
    }
}
