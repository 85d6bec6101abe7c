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
