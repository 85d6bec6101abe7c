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
