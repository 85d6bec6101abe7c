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

package org.appendlog.bench.generator;

import org.appendlog.bench.run.RunChannel;

import org.apache.flink.api.common.state.ListState;
import org.apache.flink.api.common.state.ListStateDescriptor;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.functions.source.RichParallelSourceFunction;

/**
 * Emits the {@link WordGenerator}'s stream: instance {@code i} of {@code p} emits records {@code
 * g = i, i + p, i + 2p, ...}, each word with event timestamp {@code g} (one millisecond of event
 * time per record of the whole stream). Its position is checkpointed, so after a failure it
 * resumes exactly where the restored checkpoint was taken and the jobs' results stay exact.
 *
 * <p>It stops after {@code totalRecords} (if positive), or when the run's channel asks it to; it can
 * be throttled to {@code recordsPerSecond} (over all instances; 0 = unthrottled). When the channel
 * has a failure armed, the next instance to check throws.
 */
public final class WordSource extends RichParallelSourceFunction<String>
        implements CheckpointedFunction {

    private static final long serialVersionUID = 1L;
    private static final int CHECK_EVERY = 1024;

    private final WordGenerator generator;
    private final long totalRecords;
    private final double recordsPerSecond;
    private final String runId;

    private transient ListState<Long> positionState;
    private transient long position;
    private transient volatile boolean cancelled;

    public WordSource(
            WordGenerator generator, long totalRecords, double recordsPerSecond, String runId) {
        this.generator = generator;
        this.totalRecords = totalRecords;
        this.recordsPerSecond = recordsPerSecond;
        this.runId = runId;
    }

    /** How many records instance {@code subtask} of {@code parallelism} emits out of {@code total}. */
    public static long shareOf(long total, int subtask, int parallelism) {
        return total <= subtask ? 0 : (total - subtask + parallelism - 1) / parallelism;
    }

    @Override
    public void run(SourceContext<String> ctx) throws Exception {
        RunChannel channel = RunChannel.of(runId);
        int subtask = getRuntimeContext().getTaskInfo().getIndexOfThisSubtask();
        int parallelism = getRuntimeContext().getTaskInfo().getNumberOfParallelSubtasks();
        long limit = totalRecords > 0 ? shareOf(totalRecords, subtask, parallelism) : Long.MAX_VALUE;
        double perInstanceRate = recordsPerSecond / parallelism;
        long startNanos = System.nanoTime();
        long startPosition = position;

        while (!cancelled && position < limit) {
            if (position % CHECK_EVERY == 0) {
                if (channel.stopRequested()) {
                    break;
                }
                if (channel.takeFailure()) {
                    throw new InjectedFailure(subtask, position);
                }
                if (perInstanceRate > 0) {
                    pace(startNanos, position - startPosition, perInstanceRate);
                }
            }
            long g = position * parallelism + subtask;
            synchronized (ctx.getCheckpointLock()) {
                ctx.collectWithTimestamp(Words.spell(generator.wordIdAt(g)), g);
                position++;
            }
        }
        channel.sourceFinished(subtask, position);
    }

    private static void pace(long startNanos, long emitted, double rate) throws InterruptedException {
        long dueNanos = startNanos + (long) (emitted / rate * 1e9);
        long aheadMillis = (dueNanos - System.nanoTime()) / 1_000_000;
        if (aheadMillis > 0) {
            Thread.sleep(aheadMillis);
        }
    }

    @Override
    public void cancel() {
        cancelled = true;
    }

    @Override
    public void snapshotState(FunctionSnapshotContext context) throws Exception {
        positionState.update(java.util.Collections.singletonList(position));
    }

    @Override
    public void initializeState(FunctionInitializationContext context) throws Exception {
        positionState =
                context.getOperatorStateStore()
                        .getListState(new ListStateDescriptor<>("position", Long.class));
        position = 0;
        for (Long restored : positionState.get()) {
            position = restored;
        }
    }

    /** The failure the harness injects to measure recovery. */
    public static final class InjectedFailure extends RuntimeException {
        private static final long serialVersionUID = 1L;

        InjectedFailure(int subtask, long position) {
            super(
                    "Failure injected by the benchmark harness into source subtask "
                            + subtask
                            + " at its record "
                            + position);
        }
    }
}
