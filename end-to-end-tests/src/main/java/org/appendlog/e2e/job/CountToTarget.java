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

package org.appendlog.e2e.job;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Counts each word in keyed state and reports {@code "<word> <count>"} when the count reaches the expected
 * final count, and {@code "OVERCOUNT <word> <count>"} for every count beyond it. Lost state (a count
 * restarting below what the source's restored position implies) means the target is never reached;
 * duplicated input means an overcount.
 */
final class CountToTarget extends KeyedProcessFunction<String, String, String> {

    private final long target;
    private transient ValueState<Long> count;

    CountToTarget(long target) {
        this.target = target;
    }

    @Override
    public void open(Configuration parameters) {
        count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
    }

    @Override
    public void processElement(String word, Context ctx, Collector<String> out) throws Exception {
        Long previous = count.value();
        long now = previous == null ? 1 : previous + 1;
        count.update(now);
        if (now == target) {
            out.collect(word + " " + now);
        } else if (now > target) {
            out.collect("OVERCOUNT " + word + " " + now);
        }
    }
}
