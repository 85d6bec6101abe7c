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

package org.appendlog.bench.harness;

import org.apache.flink.api.common.JobID;
import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.common.state.CheckpointListener;
import org.apache.flink.runtime.checkpoint.CheckpointStatsSnapshot;
import org.apache.flink.runtime.minicluster.MiniCluster;
import org.apache.flink.runtime.state.FunctionInitializationContext;
import org.apache.flink.runtime.state.FunctionSnapshotContext;
import org.apache.flink.runtime.testutils.MiniClusterResourceConfiguration;
import org.apache.flink.streaming.api.checkpoint.CheckpointedFunction;
import org.apache.flink.streaming.api.datastream.DataStream;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.sink.DiscardingSink;
import org.apache.flink.streaming.api.functions.source.SourceFunction;
import org.apache.flink.test.junit5.InjectMiniCluster;
import org.apache.flink.test.junit5.MiniClusterExtension;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.util.List;
import java.util.concurrent.TimeUnit;

import static org.assertj.core.api.Assertions.assertThat;

/** The figures come from Flink's checkpoint statistics, failed checkpoints with Flink's reason. */
class CheckpointFiguresTest {

    @RegisterExtension
    static final MiniClusterExtension FLINK =
            new MiniClusterExtension(
                    new MiniClusterResourceConfiguration.Builder()
                            .setNumberTaskManagers(1)
                            .setNumberSlotsPerTaskManager(1)
                            .build());

    private static final long REFUSED = 2;
    private static final long LAST = 4;

    @Test
    void aFailedCheckpointIsCountedWithFlinksReason(@InjectMiniCluster MiniCluster cluster)
            throws Exception {
        CheckpointFigures figures = CheckpointFigures.of(checkpointsOfAJob(cluster, true), 0, Long.MAX_VALUE);

        // the refused checkpoint fails the task, and the restart may fail more on its way
        assertThat(figures.failures)
                .hasSize(figures.failed)
                .allSatisfy(reason -> assertThat(reason).matches("checkpoint \\d+: \\S.*"))
                .anySatisfy(reason -> assertThat(reason).startsWith("checkpoint " + REFUSED + ": "));
        assertThat(figures.completed).isPositive();
    }

    /**
     * A window holds the checkpoints that were triggered and ended within it: one that began
     * before it or ended after it is not among its figures.
     */
    @Test
    void theFiguresAreOfTheCheckpointsThatBeganAndEndedInTheWindow(@InjectMiniCluster MiniCluster cluster)
            throws Exception {
        CheckpointStatsSnapshot snapshot = checkpointsOfAJob(cluster, false);

        List<CheckpointSample> all = CheckpointFigures.of(snapshot, 0, Long.MAX_VALUE).samples;
        assertThat(all).hasSizeGreaterThanOrEqualTo((int) LAST);
        CheckpointSample first = all.get(0);
        CheckpointSample last = all.get(all.size() - 1);
        long lastEnded = last.triggeredMs + last.durationMs;

        assertThat(CheckpointFigures.of(snapshot, first.triggeredMs + 1, Long.MAX_VALUE).samples)
                .extracting(sample -> sample.id)
                .doesNotContain(first.id)
                .contains(last.id);
        CheckpointFigures window = CheckpointFigures.of(snapshot, 0, lastEnded - 1);
        assertThat(window.samples).extracting(sample -> sample.id).doesNotContain(last.id).contains(first.id);
        assertThat(window.samples)
                .allSatisfy(sample -> assertThat(sample.triggeredMs + sample.durationMs).isLessThan(lastEnded));
        assertThat(CheckpointFigures.of(snapshot, 0, lastEnded).samples).hasSameSizeAs(all);
    }

    /**
     * Runs a job that checkpoints every 50 ms until checkpoint {@link #LAST} completed, failing
     * checkpoint {@link #REFUSED} if {@code refusing}; returns its checkpoint statistics.
     */
    private static CheckpointStatsSnapshot checkpointsOfAJob(MiniCluster cluster, boolean refusing)
            throws Exception {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(1);
        env.enableCheckpointing(50);
        env.getCheckpointConfig().setTolerableCheckpointFailureNumber(Integer.MAX_VALUE);
        DataStream<Long> numbers = env.addSource(new UntilCheckpoint());
        (refusing ? numbers.map(new RefusingOneCheckpoint()) : numbers).addSink(new DiscardingSink<>());
        JobID job = env.executeAsync().getJobID();
        cluster.requestJobResult(job).get(2, TimeUnit.MINUTES);
        return cluster.getArchivedExecutionGraph(job).get().getCheckpointStatsSnapshot();
    }

    /** Emits until checkpoint {@link #LAST} completed. */
    private static final class UntilCheckpoint implements SourceFunction<Long>, CheckpointListener {

        private volatile boolean running = true;

        @Override
        public void run(SourceContext<Long> out) throws Exception {
            long next = 0;
            while (running) {
                synchronized (out.getCheckpointLock()) {
                    out.collect(next++);
                }
                Thread.sleep(1);
            }
        }

        @Override
        public void cancel() {
            running = false;
        }

        @Override
        public void notifyCheckpointComplete(long checkpointId) {
            if (checkpointId >= LAST) {
                running = false;
            }
        }
    }

    /** Fails its snapshot of checkpoint {@link #REFUSED}. */
    private static final class RefusingOneCheckpoint
            implements MapFunction<Long, Long>, CheckpointedFunction {

        @Override
        public Long map(Long value) {
            return value;
        }

        @Override
        public void snapshotState(FunctionSnapshotContext context) {
            if (context.getCheckpointId() == REFUSED) {
                throw new IllegalStateException("refusing checkpoint " + REFUSED);
            }
        }

        @Override
        public void initializeState(FunctionInitializationContext context) {}
    }
}
