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
import org.appendlog.bench.generator.WordDistribution;
import org.appendlog.bench.generator.WordGenerator;

/** What a benchmark job computes over: the generated stream and the job's own parameters. */
public final class JobSpec {

    /** The options {@link #fromArgs} reads, with their defaults, for usage texts. */
    public static final String USAGE =
            "  --vocabulary N        distinct words (default 2000000)\n"
                    + "  --distribution D      hotset | zipf | uniform (default hotset)\n"
                    + "  --hot-fraction F      hotset: share of the words that are hot (default 0.1)\n"
                    + "  --hot-share F         hotset: share of the updates that go to hot words (default 0.9)\n"
                    + "  --skew S              zipf exponent (default 1.0)\n"
                    + "  --first-pass B        write every word once before the skewed updates (default true)\n"
                    + "  --seed N              generator seed (default 42)\n"
                    + "  --records N           total records; 0 = until stopped (default depends on program)\n"
                    + "  --rate R              records per second over all sources; 0 = unthrottled (default 0)\n"
                    + "  --parallelism P       job parallelism (default 1)\n"
                    + "  --window-records N    TopK: tumbling window size in records (= ms of event time) (default 1000000)\n"
                    + "  --top-k K             TopK: words per window (default 10)\n";

    public final WordGenerator generator;
    public final long totalRecords;
    public final double recordsPerSecond;
    public final int parallelism;
    public final long windowRecords;
    public final int topK;

    public JobSpec(
            WordGenerator generator,
            long totalRecords,
            double recordsPerSecond,
            int parallelism,
            long windowRecords,
            int topK) {
        if (parallelism < 1) {
            throw new IllegalArgumentException("--parallelism must be at least 1, got " + parallelism);
        }
        if (windowRecords < 1) {
            throw new IllegalArgumentException("--window-records must be at least 1, got " + windowRecords);
        }
        if (topK < 1) {
            throw new IllegalArgumentException("--top-k must be at least 1, got " + topK);
        }
        this.generator = generator;
        this.totalRecords = totalRecords;
        this.recordsPerSecond = recordsPerSecond;
        this.parallelism = parallelism;
        this.windowRecords = windowRecords;
        this.topK = topK;
    }

    /** Reads the options in {@link #USAGE}; {@code defaultVocabulary} and {@code defaultRecords} differ per program. */
    public static JobSpec fromArgs(Args args, int defaultVocabulary, long defaultRecords) {
        WordGenerator generator =
                new WordGenerator(
                        args.intValue("vocabulary", defaultVocabulary),
                        WordDistribution.parse(args.string("distribution", "hotset")),
                        args.doubleValue("skew", 1.0),
                        args.doubleValue("hot-fraction", 0.1),
                        args.doubleValue("hot-share", 0.9),
                        Boolean.parseBoolean(args.string("first-pass", "true")),
                        args.longValue("seed", 42));
        return new JobSpec(
                generator,
                args.longValue("records", defaultRecords),
                args.doubleValue("rate", 0),
                args.intValue("parallelism", 1),
                args.longValue("window-records", 1_000_000),
                args.intValue("top-k", 10));
    }
}
