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
import org.appendlog.cec.log.BackwardLogReader;
import org.appendlog.cec.log.LogPosition;
import org.appendlog.cec.log.LogRecord;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.streaming.api.windowing.windows.Window;

import java.io.IOException;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.function.Predicate;
import java.util.function.Supplier;

/**
 * The recovery scan of a barrier-mode checkpoint: reads a subtask's stream backwards from a
 * checkpointed position and collects the latest footprint of every window that was open there.
 * The newest tuple of a window decides: a RESULT means the window had closed, an OPEN or CHECK is
 * its state (a barrier wrote a CHECK for every changed window). Records that are not tuples (the
 * logged input) are passed over. The scan stops as soon as it has {@code n} open windows, so its
 * length depends on how old the oldest footprint is, not on the size of the log. After a rescale
 * a subtask keeps only the windows of its own keys, but counts all of them to know where to stop.
 */
final class WindowRecovery<K, W extends Window, ACC> {

    private final List<OpenWindow<K, W, ACC>> windows;
    private final long recordsScanned;
    private final long bytesRead;

    private WindowRecovery(List<OpenWindow<K, W, ACC>> windows, long recordsScanned, long bytesRead) {
        this.windows = windows;
        this.recordsScanned = recordsScanned;
        this.bytesRead = bytesRead;
    }

    static <K, W extends Window, ACC> WindowRecovery<K, W, ACC> scan(
            FileSystem fs,
            Path directory,
            LogPosition end,
            int openWindows,
            CecRecordSerializer<K, W, ACC, ?> serializer,
            Supplier<ACC> emptyAccumulator,
            Predicate<K> owned,
            long firstCreation)
            throws IOException {
        List<OpenWindow<K, W, ACC>> found = new ArrayList<>(openWindows);
        Set<OpenWindow.Id<K, W>> decided = new HashSet<>();
        DataInputDeserializer in = new DataInputDeserializer();
        long scanned = 0;
        int all = 0;
        try (BackwardLogReader reader = new BackwardLogReader(fs, directory, end)) {
            while (all < openWindows) {
                LogRecord record = reader.previous();
                if (record == null) {
                    throw new IOException(
                            "CEC recovery scan of " + directory + " from " + end + " reached the start of the "
                                    + "stream with " + all + " of " + openWindows
                                    + " open windows found; the log is incomplete");
                }
                scanned++;
                if (!CecRecordKind.isTuple(record.payload())) {
                    continue;
                }
                in.setBuffer(record.payload());
                CecRecord<K, W, ACC, ?> tuple = serializer.deserialize(in);
                if (!decided.add(new OpenWindow.Id<>(tuple.getKey(), tuple.getWindow()))
                        || tuple.getKind() == CecRecordKind.RESULT) {
                    continue;
                }
                all++;
                if (owned.test(tuple.getKey())) {
                    long openTime = tuple.getKind() == CecRecordKind.OPEN ? record.timestamp() : Long.MIN_VALUE;
                    found.add(OpenWindow.rebuilt(
                            tuple, firstCreation + found.size(), emptyAccumulator.get(),
                            reader.position(), openTime));
                }
            }
            Collections.reverse(found);
            return new WindowRecovery<>(found, scanned, reader.bytesRead());
        }
    }

    /** The windows of owned keys open at the scanned position, rebuilt from their latest footprints, oldest footprint first. */
    List<OpenWindow<K, W, ACC>> windows() {
        return windows;
    }

    long recordsScanned() {
        return recordsScanned;
    }

    long bytesRead() {
        return bytesRead;
    }
}
