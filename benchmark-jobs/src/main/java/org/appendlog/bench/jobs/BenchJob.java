package org.appendlog.bench.jobs;

import org.appendlog.bench.generator.WordSource;
import org.appendlog.bench.run.RunChannel;

import org.apache.flink.streaming.api.datastream.SingleOutputStreamOperator;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

/** A benchmark job: a pipeline over the generated words whose final result can be checked. */
public interface BenchJob {

    String name();

    /** Adds the job's pipeline to {@code env}; its operators report to the run {@code runId}. */
    void build(StreamExecutionEnvironment env, JobSpec spec, String runId);

    /**
     * How many records the stateful operator has processed when the job is in its steady state,
     * where the measured run starts: after the generator's first pass (every key written once).
     */
    default long steadyStateRecords(JobSpec spec) {
        return spec.generator.firstPassRecords();
    }

    /**
     * The name of the stateful operator whose processed records the run counts: the name its task
     * thread starts with, whose CPU time the harness reports per record.
     */
    String countingOperator();

    /** Compares what the job reported to {@code channel} with what the generator implies. */
    Verification verify(JobSpec spec, RunChannel channel);

    /** The generated words, the source every job starts from. */
    static SingleOutputStreamOperator<String> words(
            StreamExecutionEnvironment env, JobSpec spec, String runId) {
        return env.addSource(
                        new WordSource(
                                spec.generator, spec.totalRecords, spec.recordsPerSecond, runId))
                .name("words")
                .uid("words");
    }

    static BenchJob named(String name) {
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
