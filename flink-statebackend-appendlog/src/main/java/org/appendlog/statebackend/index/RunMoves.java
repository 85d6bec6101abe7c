package org.appendlog.statebackend.index;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;

/**
 * The entries that compaction moved into one run, and where each one's latest record was before,
 * until a completed checkpoint holds the run: should the run be refused or dropped instead (the
 * checkpoint that took it up was aborted or subsumed), its entries go back to where their records
 * still are ({@link #moveBack}). No other pass runs meanwhile, so nothing else moved them.
 */
final class RunMoves {

    final int run;

    /** Moves grouped by key group: {@code tables.get(i)} made moves from {@code starts[i]}. */
    private final List<KeyGroupIndex> tables = new ArrayList<>();
    private int[] starts = new int[8];
    private int[] entries = new int[64];
    private int[] fromSegments = new int[64];
    private int[] fromLengths = new int[64];
    private int size;

    RunMoves(int run) {
        this.run = run;
    }

    /** Entry {@code entry} of {@code table} moved into the run from a record of the given size. */
    void add(KeyGroupIndex table, int entry, int fromSegment, int fromLength) {
        if (tables.isEmpty() || tables.get(tables.size() - 1) != table) {
            if (tables.size() == starts.length) {
                starts = Arrays.copyOf(starts, starts.length * 2);
            }
            starts[tables.size()] = size;
            tables.add(table);
        }
        if (size == entries.length) {
            int capacity = size * 2;
            entries = Arrays.copyOf(entries, capacity);
            fromSegments = Arrays.copyOf(fromSegments, capacity);
            fromLengths = Arrays.copyOf(fromLengths, capacity);
        }
        entries[size] = entry;
        fromSegments[size] = fromSegment;
        fromLengths[size] = fromLength;
        size++;
    }

    /**
     * Moves every entry that still points at the run back to where it was, the latest moves
     * first: should an entry's number have been freed and taken by another entry that moved in
     * later, the later move is the one that stands.
     */
    void moveBack() {
        for (int t = tables.size() - 1; t >= 0; t--) {
            int end = t + 1 < tables.size() ? starts[t + 1] : size;
            tables.get(t).moveBack(entries, fromSegments, fromLengths, starts[t], end, run);
        }
    }
}
