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

import org.appendlog.cec.operator.CecWindowOperator;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.typeinfo.TypeInformation;
import org.apache.flink.api.java.typeutils.TypeExtractor;
import org.apache.flink.streaming.api.datastream.KeyedStream;
import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.windowing.assigners.WindowAssigner;
import org.apache.flink.streaming.api.windowing.windows.Window;

/** A keyed stream with a CEC window assigner, waiting for its aggregate function. */
public final class CecWindowedStream<T, K, W extends Window> {

    private final KeyedStream<T, K> input;
    private final WindowAssigner<? super T, W> assigner;
    private final long countSize;

    CecWindowedStream(KeyedStream<T, K> input, WindowAssigner<? super T, W> assigner, long countSize) {
        this.input = input;
        this.assigner = assigner;
        this.countSize = countSize;
    }

    /**
     * Aggregates each window incrementally and emits the CEC stream of OPEN, CHECK and RESULT
     * tuples, persisted under {@code options.logPath()}. Accumulator and result types are
     * extracted from the function.
     */
    public <ACC, OUT> SingleOutputStreamOperator<CecRecord<K, W, ACC, OUT>> aggregate(
            AggregateFunction<T, ACC, OUT> function, CecOptions options) {
        TypeInformation<ACC> accType =
                TypeExtractor.getAggregateFunctionAccumulatorType(
                        function, input.getType(), "CecWindows.aggregate", false);
        TypeInformation<OUT> outType =
                TypeExtractor.getAggregateFunctionReturnType(function, input.getType(), "CecWindows.aggregate", false);
        return aggregate(function, accType, outType, options);
    }

    /** As {@link #aggregate(AggregateFunction, CecOptions)} with explicit types. */
    public <ACC, OUT> SingleOutputStreamOperator<CecRecord<K, W, ACC, OUT>> aggregate(
            AggregateFunction<T, ACC, OUT> function,
            TypeInformation<ACC> accumulatorType,
            TypeInformation<OUT> resultType,
            CecOptions options) {
        CecRecordTypeInfo<K, W, ACC, OUT> type =
                new CecRecordTypeInfo<>(
                        input.getKeyType(),
                        assigner,
                        accumulatorType,
                        resultType);
        String name =
                "CecWindow(" + assigner + (countSize > 0 ? ", count " + countSize : "") + ", "
                        + function.getClass().getSimpleName() + ")";
        return input.transform(
                name,
                type,
                new CecWindowOperator<K, T, ACC, OUT, W>(
                        assigner, input.getType(), countSize, function, type, options));
    }
}
