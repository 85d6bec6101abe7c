package org.appendlog.statebackend.index;

import org.appendlog.statebackend.tracking.EntryRef;

import java.util.HashMap;
import java.util.Map;

/**
 * For the live entries of one key group: the segment and length of each entry's latest record.
 * Key groups are indexed separately so that restore threads, which own disjoint key groups, never
 * contend; the lock per key group orders checkpoint writers and the compactor.
 */
final class KeyGroupIndex {

    /** Updated in place: a new object per write would be promoted with the index, then die. */
    private static final class Location {
        SegmentStats segment;
        int length;

        Location(SegmentStats segment, int length) {
            this.segment = segment;
            this.length = length;
        }
    }

    private final Map<EntryRef, Location> latest = new HashMap<>();

    synchronized void put(EntryRef entry, SegmentStats segment, int length) {
        segment.live(length);
        Location location = latest.get(entry);
        if (location == null) {
            latest.put(entry, new Location(segment, length));
        } else {
            location.segment.died(location.length);
            location.segment = segment;
            location.length = length;
        }
    }

    synchronized void remove(EntryRef entry) {
        Location previous = latest.remove(entry);
        if (previous != null) {
            previous.segment.died(previous.length);
        }
    }

    /** The segment of the entry's latest record, or null if the entry is not live. */
    synchronized String latestSegment(EntryRef entry) {
        Location location = latest.get(entry);
        return location == null ? null : location.segment.segment();
    }

    /** Moves the entry to {@code to} unless a newer record has appeared outside {@code from}. */
    synchronized void moveIfStillIn(
            EntryRef entry, java.util.Set<String> from, SegmentStats to, int length) {
        Location location = latest.get(entry);
        if (location != null && from.contains(location.segment.segment())) {
            put(entry, to, length);
        }
    }

    synchronized int size() {
        return latest.size();
    }
}
