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

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.client.program.ClusterClient;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.core.execution.SavepointFormatType;
import org.apache.flink.runtime.jobgraph.SavepointRestoreSettings;
import org.apache.flink.state.api.OperatorIdentifier;
import org.apache.flink.state.api.OperatorTransformation;
import org.apache.flink.state.api.SavepointReader;
import org.apache.flink.state.api.SavepointWriter;
import org.apache.flink.state.api.functions.KeyedStateBootstrapFunction;
import org.apache.flink.state.api.functions.KeyedStateReaderFunction;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.test.junit5.InjectClusterClient;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink's State Processor API over appendlog savepoints of both formats, with this backend as
 * the one that reads and writes: it reads every key's count exactly, and a savepoint it rewrites
 * (the counting operator's state replaced) is one the job resumes from with the new counts.
 */
class StateProcessorApiTest extends MidStreamSavepointTestBase {

    private static final OperatorIdentifier COUNTER = OperatorIdentifier.forUid("count-per-key");
    /** What the rewritten savepoint adds to every key's count. */
    private static final long RAISE = 1_000;

    @EachFormat
    void readsAndRewritesASavepoint(
            SavepointFormatType format, @InjectClusterClient ClusterClient<?> client)
            throws Exception {
        CountingJobRuns.Stopped stopped = stopMidStream(client, format);

        assertThat(readCounts(stopped.savepoint))
                .as("counts read from the %s savepoint %s", format, stopped.savepoint)
                .isEqualTo(stopped.counts);

        Map<Integer, Long> raised = new TreeMap<>();
        stopped.counts.forEach((key, count) -> raised.put(key, count + RAISE));
        String rewritten = tmp.resolve("rewritten").toUri().toString();
        rewrite(stopped.savepoint, raised, rewritten);
        assertThat(readCounts(rewritten)).as("counts read from %s", rewritten).isEqualTo(raised);

        CountingJobRuns.Resumed resumed =
                CountingJobRuns.resumeToEnd(
                        client,
                        JOB,
                        config(),
                        3,
                        SavepointRestoreSettings.forPath(rewritten),
                        RAISE);
        assertThat(resumed.restored).as("counts the job resumed from").isEqualTo(raised);
    }

    private StreamExecutionEnvironment environment() {
        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment();
        env.setParallelism(2);
        return env;
    }

    private AppendLogStateBackend backend() {
        return new AppendLogStateBackend(tmp.resolve("processor-log").toUri().toString());
    }

    private Map<Integer, Long> readCounts(String savepoint) throws Exception {
        StreamExecutionEnvironment env = environment();
        Map<Integer, Long> counts = new TreeMap<>();
        try (CloseableIterator<Tuple2<Integer, Long>> read =
                SavepointReader.read(env, savepoint, backend())
                        .readKeyedState(COUNTER, new CountReader())
                        .executeAndCollect()) {
            read.forEachRemaining(
                    c ->
                            assertThat(counts.put(c.f0, c.f1))
                                    .as("count of key %d read once", c.f0)
                                    .isNull());
        }
        return counts;
    }

    /** Writes {@code savepoint} to {@code target}, the counting operator holding {@code counts}. */
    private void rewrite(String savepoint, Map<Integer, Long> counts, String target)
            throws Exception {
        StreamExecutionEnvironment env = environment();
        List<Tuple2<Integer, Long>> entries = new ArrayList<>();
        counts.forEach((key, count) -> entries.add(Tuple2.of(key, count)));
        SavepointWriter.fromExistingSavepoint(env, savepoint, backend())
                .removeOperator(COUNTER)
                .withOperator(
                        COUNTER,
                        OperatorTransformation.bootstrapWith(
                                        env.fromCollection(
                                                entries, Types.TUPLE(Types.INT, Types.LONG)))
                                .keyBy(entry -> entry.f0, Types.INT)
                                .transform(new CountWriter()))
                .write(target);
        env.execute("rewrite " + savepoint);
    }

    private static ValueStateDescriptor<Long> countState() {
        return new ValueStateDescriptor<>("count", Types.LONG);
    }

    /** Reads {@link PerKeyCounter}'s count of every key. */
    private static final class CountReader
            extends KeyedStateReaderFunction<Integer, Tuple2<Integer, Long>> {
        private transient ValueState<Long> count;

        @Override
        public void open(Configuration parameters) {
            count = getRuntimeContext().getState(countState());
        }

        @Override
        public void readKey(Integer key, Context ctx, Collector<Tuple2<Integer, Long>> out)
                throws Exception {
            out.collect(Tuple2.of(key, count.value()));
        }
    }

    /** Writes the count of a key as {@link PerKeyCounter} keeps it. */
    private static final class CountWriter
            extends KeyedStateBootstrapFunction<Integer, Tuple2<Integer, Long>> {
        private transient ValueState<Long> count;

        @Override
        public void open(Configuration parameters) {
            count = getRuntimeContext().getState(countState());
        }

        @Override
        public void processElement(Tuple2<Integer, Long> entry, Context ctx) throws Exception {
            count.update(entry.f1);
        }
    }
}
