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

import org.appendlog.bench.generator.WordSource;
import org.appendlog.bench.run.RunChannel;

import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import static org.apache.flink.util.Preconditions.checkNotNull;

/** A benchmark job: a pipeline over the generated words whose final result can be checked. */
public abstract class BenchJob {

    private final String name;
    private final String countingOperator;

    /**
     * @param name the job's name in the harness's options and results
     * @param countingOperator the name of the stateful operator whose processed records the run
     *     counts: the name its task thread starts with, whose CPU time the harness reports per
     *     record
     */
    BenchJob(String name, String countingOperator) {
        this.name = checkNotNull(name);
        this.countingOperator = checkNotNull(countingOperator);
    }

    public final String name() {
        return name;
    }

    public final String countingOperator() {
        return countingOperator;
    }

    /** Adds the job's pipeline to {@code env}; its operators report to the run {@code runId}. */
    public abstract void build(StreamExecutionEnvironment env, JobSpec spec, String runId);

    /**
     * How many records the stateful operator has processed when the job is in its steady state,
     * where the measured run starts: after the generator's first pass (every key written once).
     */
    public long steadyStateRecords(JobSpec spec) {
        return spec.generator.firstPassRecords();
    }

    /** Compares what the job reported to {@code channel} with what the generator implies. */
    public abstract Verification verify(JobSpec spec, RunChannel channel);

    /** The generated words, the source every job starts from. */
    public static SingleOutputStreamOperator<String> words(
            StreamExecutionEnvironment env, JobSpec spec, String runId) {
        return env.addSource(
                        new WordSource(
                                spec.generator, spec.totalRecords, spec.recordsPerSecond, runId))
                .name("words")
                .uid("words");
    }

    public static BenchJob named(String name) {
        switch (name) {
            case "wordcount":
                return new RunningWordCount();
            case "topk":
                return new TopK();
            default:
                throw new IllegalArgumentException(
                        "Unknown job '" + name + "': use wordcount or topk");
        }
    }
}
