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

package org.appendlog.bench.run;

import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.sink.RichSinkFunction;
import org.apache.flink.streaming.api.operators.StreamingRuntimeContext;

/**
 * A sink whose output reaches the run's channel only when the checkpoint after it completes (two
 * phases, as an exactly-once sink to an external system): output produced after the last
 * completed checkpoint of a failed attempt is dropped and produced again by the restored job, so the
 * results the jobs verify are exactly what a correct recovery yields. With checkpointing off the
 * output is applied when the input ends.
 *
 * @param <T> the records
 */
public abstract class CommittingSink<T> extends RichSinkFunction<T>
        implements CheckpointedFunction, CheckpointListener {

    private static final long serialVersionUID = 1L;

    private final String runId;
    private transient RunChannel channel;
    private transient String sinkName;

    protected CommittingSink(String runId) {
        this.runId = runId;
    }

    /** Keeps {@code value} until the next checkpoint barrier. */
    protected abstract void hold(T value);

    /** Returns what applies the held output to {@code channel}, and starts holding anew. */
    protected abstract Runnable takeHeld(RunChannel channel);

    @Override
    public final void invoke(T value, Context context) {
        hold(value);
    }

    @Override
    public void initializeState(FunctionInitializationContext context) {
        channel = RunChannel.of(runId);
        sinkName = getRuntimeContext().getTaskInfo().getTaskName()
                + "#" + getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        if (context.getRestoredCheckpointId().isPresent()) {
            channel.restored(sinkName, context.getRestoredCheckpointId().getAsLong());
        }
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) {
        channel.stage(sinkName, context.getCheckpointId(), takeHeld(channel));
    }

    @Override
    public void notifyCheckpointComplete(long checkpointId) {
        channel.commit(sinkName, checkpointId);
    }

    @Override
    public void finish() {
        if (!((StreamingRuntimeContext) getRuntimeContext()).isCheckpointingEnabled()) {
            takeHeld(channel).run();
        }
    }
}
