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

package org.appendlog.bench.jobs;

import org.appendlog.bench.generator.EmittedRecords;
import org.appendlog.bench.generator.Words;
import org.appendlog.bench.run.CommittingSink;
import org.appendlog.bench.run.ProcessedCounter;
import org.appendlog.bench.run.RunChannel;

import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.api.common.functions.OpenContext;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.streaming.api.functions.KeyedProcessFunction;
import org.apache.flink.util.Collector;

/**
 * Running count per word in keyed {@code ValueState}: every record updates its word's count and
 * emits the new count. A sink keeps the latest count per word; at the end it must equal the number
 * of times the generator emitted that word (also after an injected failure and recovery: the latest
 * count comes from the last attempt).
 */
public final class RunningWordCount extends BenchJob {

    private static final String COUNTING = "count-per-word";

    public static void main(String[] args) throws Exception {
        JobMain.run(new RunningWordCount(), args);
    }

    public RunningWordCount() {
        super("wordcount", COUNTING);
    }

    @Override
    public void build(StreamExecutionEnvironment env, JobSpec spec, String runId) {
        BenchJob.words(env, spec, runId)
                .keyBy(word -> word)
                .process(new CountPerWord(runId))
                .name(COUNTING)
                .uid(COUNTING)
                .addSink(new LatestCountSink(runId, spec.generator.vocabulary()))
                .name("latest-count")
                .uid("latest-count");
    }

    @Override
    public Verification verify(JobSpec spec, RunChannel channel) {
        long[] expected = new long[spec.generator.vocabulary()];
        long records =
                EmittedRecords.replay(
                        spec.generator,
                        channel.endOffsets(spec.parallelism),
                        (g, wordId) -> expected[wordId]++);
        int wrong = 0;
        String example = "";
        long words = 0;
        for (int id = 0; id < expected.length; id++) {
            if (expected[id] > 0) {
                words++;
            }
            long actual = channel.latestCount(id);
            if (actual != expected[id]) {
                if (wrong++ == 0) {
                    example = ", e.g. " + Words.spell(id) + " expected " + expected[id] + " got " + actual;
                }
            }
        }
        String counted = records + " records over " + words + " distinct words";
        return wrong == 0
                ? Verification.passed("final count of every word equals the generator's (" + counted + ")")
                : Verification.failed(wrong + " words have a wrong final count" + example + " (" + counted + ")");
    }

    /** Adds one to the word's count and emits (word, count). */
    static final class CountPerWord extends KeyedProcessFunction<String, String, Tuple2<String, Long>> {

        private static final long serialVersionUID = 1L;

        private final ProcessedCounter processed;
        private transient ValueState<Long> count;

        CountPerWord(String runId) {
            this.processed = new ProcessedCounter(runId);
        }

        @Override
        public void open(OpenContext openContext) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Long.class));
        }

        @Override
        public void processElement(String word, Context ctx, Collector<Tuple2<String, Long>> out)
                throws Exception {
            Long previous = count.value();
            long next = previous == null ? 1 : previous + 1;
            count.update(next);
            processed.count();
            out.collect(Tuple2.of(word, next));
        }
    }

    /** Holds the latest count of each word updated since the last barrier, then commits them. */
    static final class LatestCountSink extends CommittingSink<Tuple2<String, Long>> {

        private static final long serialVersionUID = 1L;

        private final int vocabulary;
        private transient long[] latest;
        private transient int[] updated;
        private transient int updatedCount;

        LatestCountSink(String runId, int vocabulary) {
            super(runId);
            this.vocabulary = vocabulary;
        }

        @Override
        protected void hold(Tuple2<String, Long> value) {
            if (latest == null) {
                // flat arrays: a map entry per record would cost more than the counting itself
                latest = new long[vocabulary];
                updated = new int[vocabulary];
            }
            int id = Words.idOf(value.f0);
            if (latest[id] == 0) {
                updated[updatedCount++] = id;
            }
            latest[id] = value.f1;
        }

        @Override
        protected Runnable takeHeld(RunChannel channel) {
            long[] pairs = new long[2 * updatedCount];
            for (int i = 0; i < updatedCount; i++) {
                int id = updated[i];
                pairs[2 * i] = id;
                pairs[2 * i + 1] = latest[id];
                latest[id] = 0;
            }
            updatedCount = 0;
            return () -> {
                for (int i = 0; i < pairs.length; i += 2) {
                    channel.latestCount((int) pairs[i], pairs[i + 1]);
                }
            };
        }
    }
}
