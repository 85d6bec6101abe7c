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

package org.appendlog.statebackend;

import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

import java.util.Set;
import java.util.concurrent.ConcurrentSkipListSet;

/**
 * Counts records per key in a keyed {@link ValueState} and emits the new count with every record.
 * It also notes which checkpoints completed, so that tests can find the first one of a run.
 */
public class PerKeyCounter extends KeyedProcessFunction<Integer, Long, CountUpdate>
        implements CheckpointListener {

    private static final Set<Long> COMPLETED_CHECKPOINTS = new ConcurrentSkipListSet<>();

    private transient ValueState<Long> count;

    @Override
    public void open(Configuration parameters) {
        count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
    }

    @Override
    public void processElement(Long value, Context ctx, Collector<CountUpdate> out)
            throws Exception {
        Long previous = count.value();
        long next = previous == null ? 1 : previous + 1;
        count.update(next);
        out.collect(
                new CountUpdate(
                        ctx.getCurrentKey(),
                        next,
                        getRuntimeContext().getTaskInfo().getAttemptNumber()));
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        COMPLETED_CHECKPOINTS.add(checkpointId);
    }

    /** The ids of the checkpoints completed since the last {@link #reset()}, ascending. */
    static Set<Long> completedCheckpoints() {
        return COMPLETED_CHECKPOINTS;
    }

    static void reset() {
        COMPLETED_CHECKPOINTS.clear();
    }
}
