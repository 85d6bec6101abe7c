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

import org.appendlog.bench.Args;
import org.appendlog.bench.run.RunChannel;

import org.apache.flink.configuration.CheckpointingOptions;
import org.apache.flink.configuration.Configuration;
import org.apache.flink.streaming.api.environment.StreamExecutionEnvironment;

import java.time.Duration;
import java.util.UUID;

/**
 * Runs one benchmark job once, bounded, in this JVM (Flink's local environment), then verifies its
 * result and exits non-zero if the result is wrong. The state backend and checkpoint storage come
 * from the usual Flink options, given as {@code --flink.<key> <value>}, e.g. {@code
 * --flink.state.backend.type rocksdb}.
 */
final class JobMain {

    private JobMain() {}

    static void run(BenchJob job, String[] argv) throws Exception {
        Args args = new Args(argv);
        if (args.flag("help")) {
            System.out.println(
                    "Options:\n"
                            + JobSpec.USAGE
                            + "  --checkpoint-interval-ms N  (default 1000; 0 = off)\n"
                            + "  --flink.<option> V    any Flink configuration option\n");
            return;
        }
        JobSpec spec = JobSpec.fromArgs(args, 100_000, 2_000_000);
        if (spec.totalRecords <= 0) {
            throw new IllegalArgumentException("--records must be positive when a job runs on its own");
        }
        long interval = args.longValue("checkpoint-interval-ms", 1000);
        Configuration conf = new Configuration();
        args.flinkOptions().forEach(conf::setString);
        if (interval > 0) {
            conf.set(CheckpointingOptions.CHECKPOINTING_INTERVAL, Duration.ofMillis(interval));
        }
        args.rejectUnknown();

        StreamExecutionEnvironment env = StreamExecutionEnvironment.getExecutionEnvironment(conf);
        env.setParallelism(spec.parallelism);
        RunChannel channel = RunChannel.open(job.name() + "-" + UUID.randomUUID(), spec.generator.vocabulary());
        try {
            job.build(env, spec, channel.runId());
            long start = System.nanoTime();
            env.execute(job.name() + " over " + spec.generator);
            double seconds = (System.nanoTime() - start) / 1e9;
            Verification verification = job.verify(spec, channel);
            System.out.printf(
                    "%s: %d records in %.1f s (%.0f records/s)%n%s%n",
                    job.name(), spec.totalRecords, seconds, spec.totalRecords / seconds, verification);
            if (!verification.passed) {
                System.exit(1);
            }
        } finally {
            channel.close();
        }
    }
}
