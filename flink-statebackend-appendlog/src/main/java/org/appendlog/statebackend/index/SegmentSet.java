package org.appendlog.statebackend.index;

import java.util.BitSet;

/**
 * Segments of the log by their index numbers, as one compaction pass names them: the index tests
 * every record of the pass against the set, so it tests a bit instead of hashing segment names.
 */
public final class SegmentSet {

    private final BitSet ids;

    SegmentSet(BitSet ids) {
        this.ids = ids;
    }

    boolean contains(int id) {
        return id >= 0 && ids.get(id);
    }
}
