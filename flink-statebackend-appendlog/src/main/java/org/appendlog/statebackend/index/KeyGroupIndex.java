package org.appendlog.statebackend.index;

import org.appendlog.statebackend.tracking.EntryRef;

import java.util.HashMap;
import java.util.Map;

/**
 * For the live entries of one key group: the segment and length of each entry's latest record.
 * Key groups are indexed separately so that restore threads, which own disjoint key groups, can
 * fill them without locking.
 */
final class KeyGroupIndex {

    private static final class Location {
        final SegmentStats segment;
        final int length;

        Location(SegmentStats segment, int length) {
            this.segment = segment;
            this.length = length;
        }
    }

    private final Map<EntryRef, Location> latest = new HashMap<>();

    void put(EntryRef entry, SegmentStats segment, int length) {
        segment.live(length);
        Location previous = latest.put(entry, new Location(segment, length));
        if (previous != null) {
            previous.segment.died(previous.length);
        }
    }

    void remove(EntryRef entry) {
        Location previous = latest.remove(entry);
        if (previous != null) {
            previous.segment.died(previous.length);
        }
    }

    int size() {
        return latest.size();
    }
}
