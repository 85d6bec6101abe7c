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

package org.appendlog.examples;

import org.appendlog.statebackend.AppendLogOptions;
import org.appendlog.statebackend.AppendLogStateBackendFactory;

import org.apache.flink.api.common.eventtime.WatermarkStrategy;
import org.apache.flink.api.common.functions.RichFlatMapFunction;
import org.apache.flink.api.common.state.ValueState;
import org.apache.flink.api.common.state.ValueStateDescriptor;
import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.api.java.tuple.Tuple2;
import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.configuration.ReadableConfig;
import org.apache.flink.configuration.StateBackendOptions;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;
import org.apache.flink.streaming.api.environment.LocalStreamEnvironment;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;
import org.apache.flink.util.CloseableIterator;
import org.apache.flink.util.Collector;

import java.io.IOException;
import java.nio.file.Path;
import java.nio.file.Paths;
import java.util.HashMap;
import java.util.Map;

/**
 * Counts words with the append-log state backend and checks every count. Two ways to run it:
 *
 * <ul>
 *   <li>embedded (started with {@code java}): Flink in this JVM, the backend's log in a local
 *       directory; arguments {@code [records] [log-directory]}, defaults 300000 and {@code
 *       target/wordcount-appendlog};
 *   <li>on a cluster ({@code bin/flink run examples-<version>.jar [records]}): the state backend,
 *       its log directory and the checkpoint storage are the cluster's configuration.
 * </ul>
 *
 * <p>Both checkpoint every 500 ms, print what they did and exit with status 1 if a final count
 * differs from the input.
 */
public final class WordCount {

    private static final String[] VOCABULARY = vocabulary(1_000);

    public static void main(String[] args) throws Exception {
        long records = args.length > 0 ? Long.parseLong(args[0]) : 300_000;
        // bin/flink run hands the job its cluster's environment; a plain java start gets a local one.
        StreamExecutionEnvironment context = StreamExecutionEnvironment.getExecutionEnvironment();
        boolean exact;
        if (context instanceof LocalStreamEnvironment) {
            Path dir = Paths.get(args.length > 1 ? args[1] : "target/wordcount-appendlog").toAbsolutePath();
            exact = run(records, dir);
        } else {
            exact = runOnCluster(context, records);
        }
        if (!exact) {
            System.exit(1);
        }
    }

    /** Runs the job embedded, its log in {@code dir}, and returns whether every final count matches the input. */
    static boolean run(long records, Path dir) throws Exception {
        Configuration conf = new Configuration();
        conf.set(StateBackendOptions.STATE_BACKEND, AppendLogStateBackendFactory.class.getName());
        conf.set(AppendLogOptions.LOG_DIR, dir.resolve("log").toUri().toString());
        conf.set(CheckpointingOptions.CHECKPOINTS_DIRECTORY, dir.resolve("checkpoints").toUri().toString());
        StreamExecutionEnvironment env = StreamExecutionEnvironment.createLocalEnvironment(2, conf);

        System.out.printf(
                "Counting %d words (vocabulary %d) with the appendlog state backend, log in %s%n",
                records, VOCABULARY.length, dir.resolve("log"));
        LogWatcher watcher = LogWatcher.start(dir.resolve("log"));
        boolean exact = count(env, records);
        watcher.stop();
        System.out.printf(
                "State log while running: up to %d segment file(s), %d bytes; after the job finished"
                        + " and its checkpoints were discarded: %d segment file(s)%n",
                watcher.peakSegments(),
                watcher.peakBytes(),
                LogWatcher.segments(dir.resolve("log")).count());
        return report(exact);
    }

    /** Runs the job on the cluster that {@code env} submits to, with that cluster's configuration. */
    private static boolean runOnCluster(StreamExecutionEnvironment env, long records) throws Exception {
        ReadableConfig conf = env.getConfiguration();
        System.out.printf(
                "Counting %d words (vocabulary %d) on the cluster; state backend %s, log in %s,"
                        + " checkpoint storage %s%n",
                records,
                VOCABULARY.length,
                conf.get(StateBackendOptions.STATE_BACKEND),
                conf.getOptional(AppendLogOptions.LOG_DIR).orElse("(not set)"),
                conf.getOptional(CheckpointingOptions.CHECKPOINT_STORAGE).orElse("(default)"));
        return report(count(env, records));
    }

    /** Counts {@code records} words on {@code env} and returns whether every final count matches the input. */
    private static boolean count(StreamExecutionEnvironment env, long records) throws Exception {
        env.enableCheckpointing(500);
        DataGeneratorSource<String> words =
                new DataGeneratorSource<>(
                        WordCount::wordAt,
                        records,
                        RateLimiterStrategy.perSecond(100_000),
                        Types.STRING);

        long start = System.nanoTime();
        Map<String, Long> counts = new HashMap<>();
        try (CloseableIterator<Tuple2<String, Long>> updates =
                env.fromSource(words, WatermarkStrategy.noWatermarks(), "words")
                        .keyBy(word -> word)
                        .flatMap(new Count())
                        .executeAndCollect("appendlog word count")) {
            while (updates.hasNext()) {
                Tuple2<String, Long> update = updates.next();
                counts.merge(update.f0, update.f1, Math::max);
            }
        }
        double seconds = (System.nanoTime() - start) / 1e9;

        Map<String, Long> expected = new HashMap<>();
        for (long i = 0; i < records; i++) {
            expected.merge(wordAt(i), 1L, Long::sum);
        }
        System.out.printf("Processed %d words in %.1f s; %d distinct words%n", records, seconds, counts.size());
        counts.entrySet().stream()
                .sorted(Map.Entry.<String, Long>comparingByValue().reversed())
                .limit(5)
                .forEach(e -> System.out.printf("  %-10s %d%n", e.getKey(), e.getValue()));
        return expected.equals(counts);
    }

    private static boolean report(boolean exact) {
        System.out.println(
                exact
                        ? "Every count matches the input: OK"
                        : "Counts differ from the input: FAILED");
        return exact;
    }

    /** The i-th word of the input: skewed towards the start of the vocabulary. */
    static String wordAt(long i) {
        long h = (i * 0x9E3779B97F4A7C15L) >>> 33;
        int rank = (int) ((h % VOCABULARY.length) * (h % 7 + 1) / 7);
        return VOCABULARY[rank];
    }

    private static String[] vocabulary(int size) {
        String[] words = new String[size];
        for (int i = 0; i < size; i++) {
            words[i] = "word" + i;
        }
        return words;
    }

    /** Keeps a running count per word in keyed state and emits each new count. */
    static final class Count extends RichFlatMapFunction<String, Tuple2<String, Long>> {
        private transient ValueState<Long> count;

        @Override
        public void open(Configuration parameters) {
            count = getRuntimeContext().getState(new ValueStateDescriptor<>("count", Types.LONG));
        }

        @Override
        public void flatMap(String word, Collector<Tuple2<String, Long>> out) throws IOException {
            Long current = count.value();
            long next = current == null ? 1 : current + 1;
            count.update(next);
            out.collect(Tuple2.of(word, next));
        }
    }

    private WordCount() {}
}
