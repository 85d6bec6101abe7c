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

/**
 * Replays what the {@link WordSource} instances emitted, given where each one's last attempt
 * stopped, in the order of record number {@code g} (= event time).
 */
public final class EmittedRecords {

    /** Receives one replayed record. */
    public interface Visitor {
        void visit(long g, int wordId);
    }

    private EmittedRecords() {}

    /** Returns how many records were replayed. */
    public static long replay(WordGenerator generator, long[] endOffsets, Visitor visitor) {
        int parallelism = endOffsets.length;
        long maxEnd = 0;
        for (long end : endOffsets) {
            maxEnd = Math.max(maxEnd, end);
        }
        long replayed = 0;
        for (long position = 0; position < maxEnd; position++) {
            for (int subtask = 0; subtask < parallelism; subtask++) {
                if (position < endOffsets[subtask]) {
                    long g = position * parallelism + subtask;
                    visitor.visit(g, generator.wordIdAt(g));
                    replayed++;
                }
            }
        }
        return replayed;
    }
}
