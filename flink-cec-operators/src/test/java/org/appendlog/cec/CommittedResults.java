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

package org.appendlog.cec;

import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.log.PersistedStream;
import org.appendlog.cec.source.CecLogSource;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.windowing.windows.TimeWindow;

import java.io.File;
import java.util.ArrayList;
import java.util.List;
import java.util.stream.Collectors;

/** The RESULT tuples of a committed persisted stream, read back by a job with {@link CecLogSource}. */
public final class CommittedResults {

    private CommittedResults() {}

    public static <K, W, ACC, OUT> List<CecRecord<K, W, ACC, OUT>> read(
            File dir, TypeInformation<CecRecord<K, W, ACC, OUT>> type, StreamExecutionEnvironment reader)
            throws Exception {
        return read(dir, type, reader, Long.MIN_VALUE);
    }

    /** The RESULT tuples with timestamp at or after {@code fromTimestamp}. */
    public static <K, W, ACC, OUT> List<CecRecord<K, W, ACC, OUT>> read(
            File dir, TypeInformation<CecRecord<K, W, ACC, OUT>> type, StreamExecutionEnvironment reader,
            long fromTimestamp) throws Exception {
        List<CecRecord<K, W, ACC, OUT>> results = new ArrayList<>();
        reader.fromSource(CecLogSource.of(dir.toURI().toString(), type, fromTimestamp), WatermarkStrategy.noWatermarks(),
                        "history")
                .filter(CecRecord::isResult)
                .executeAndCollect()
                .forEachRemaining(results::add);
        return results;
    }

    /** The RESULTs of time windows, each as {@link #describe}d. */
    public static <K, ACC, OUT> List<String> readDescribed(
            File dir, TypeInformation<CecRecord<K, TimeWindow, ACC, OUT>> type, StreamExecutionEnvironment reader)
            throws Exception {
        return readDescribed(dir, type, reader, Long.MIN_VALUE);
    }

    /** The RESULTs of time windows with timestamp at or after {@code fromTimestamp}, each as {@link #describe}d. */
    public static <K, ACC, OUT> List<String> readDescribed(
            File dir, TypeInformation<CecRecord<K, TimeWindow, ACC, OUT>> type, StreamExecutionEnvironment reader,
            long fromTimestamp) throws Exception {
        return read(dir, type, reader, fromTimestamp).stream()
                .map(r -> describe(r.getKey(), r.getWindow(), r.getValue()))
                .collect(Collectors.toList());
    }

    /** A window's result as the tests compare them: {@code key|window start|value}. */
    public static String describe(Object key, TimeWindow window, Object value) {
        return key + "|" + window.getStart() + "|" + value;
    }

    /** Waits until subtask 0 of the job writing {@code dir} committed, so that a savepoint comes mid-input. */
    public static void awaitFirstCommit(File dir) throws Exception {
        Path subtask = PersistedStream.subtaskDirectory(new Path(dir.toURI()), 0);
        while (PersistedStream.latestCommit(FileSystem.getLocalFileSystem(), subtask).isEmpty()) {
            Thread.sleep(20);
        }
    }
}
