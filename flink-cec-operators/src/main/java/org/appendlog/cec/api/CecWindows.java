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

package org.appendlog.cec.api;

import org.apache.flink.api.common.functions.FilterFunction;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.windowing.assigners.GlobalWindows;
import org.apache.flink.streaming.api.windowing.assigners.MergingWindowAssigner;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.GlobalWindow;
import org.apache.flink.streaming.api.windowing.windows.Window;

/**
 * Entry point of the CEC window operators, shaped like Flink's own windows:
 *
 * <pre>{@code
 * DataStream<CecRecord<String, TimeWindow, Long, Long>> out =
 *     CecWindows.of(words.keyBy(w -> w))
 *         .window(TumblingEventTimeWindows.of(Duration.ofSeconds(10)))
 *         .aggregate(new CountAggregate(), CecOptions.builder("hdfs:///cec/wordcount").build());
 * DataStream<CecRecord<String, TimeWindow, Long, Long>> results = CecWindows.results(out);
 * }</pre>
 */
public final class CecWindows<T, K> {

    private final KeyedStream<T, K> input;

    private CecWindows(KeyedStream<T, K> input) {
        this.input = input;
    }

    public static <T, K> CecWindows<T, K> of(KeyedStream<T, K> input) {
        return new CecWindows<>(input);
    }

    /**
     * Tumbling or sliding windows in event or processing time. Merging (session) windows and
     * {@link GlobalWindows} (use {@link #countWindow}) are rejected.
     */
    public <W extends Window> CecWindowedStream<T, K, W> window(WindowAssigner<? super T, W> assigner) {
        if (assigner instanceof MergingWindowAssigner) {
            throw new IllegalArgumentException(
                    "CEC window operators do not support merging window assigners such as "
                            + assigner.getClass().getSimpleName() + "; use tumbling or sliding windows.");
        }
        if (assigner instanceof GlobalWindows) {
            throw new IllegalArgumentException(
                    "A CEC window on GlobalWindows would never fire; use countWindow(size) for count windows.");
        }
        return new CecWindowedStream<>(input, assigner, 0L);
    }

    /** Tumbling count windows per key: each window fires and closes after {@code size} elements. */
    public CecWindowedStream<T, K, GlobalWindow> countWindow(long size) {
        if (size < 1) {
            throw new IllegalArgumentException("CEC count window size must be at least 1, got " + size);
        }
        return new CecWindowedStream<>(input, GlobalWindows.create(), size);
    }

    /** Keeps only the RESULT tuples of a CEC operator's output. */
    public static <K, W, ACC, OUT> DataStream<CecRecord<K, W, ACC, OUT>> results(
            DataStream<CecRecord<K, W, ACC, OUT>> cecStream) {
        return cecStream.filter((FilterFunction<CecRecord<K, W, ACC, OUT>>) CecRecord::isResult).name("CEC results");
    }

    /** Keeps only the values of the RESULT tuples, like Flink's {@code WindowedStream#aggregate}. */
    @SuppressWarnings("unchecked")
    public static <K, W, ACC, OUT> DataStream<OUT> resultValues(DataStream<CecRecord<K, W, ACC, OUT>> cecStream) {
        TypeInformation<OUT> valueType = ((CecRecordTypeInfo<?, ?, ?, OUT>) cecStream.getType()).getValueType();
        return results(cecStream)
                .map((MapFunction<CecRecord<K, W, ACC, OUT>, OUT>) CecRecord::getValue)
                .returns(valueType)
                .name("CEC result values");
    }
}
