package org.appendlog.statebackend.index;

import org.appendlog.statebackend.tracking.EntryRef;

import org.apache.flink.runtime.state.KeyGroupRange;

import java.util.ArrayList;
import java.util.Collection;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The "indexed" part of the log (cf. Bitcask's keydir): where the latest record of every live
 * entry lives, and from that, per segment, how many of its bytes are still live. Compaction picks
 * segments by these numbers without scanning them.
 */
public final class LogIndex {

    private final KeyGroupRange keyGroups;
    private final KeyGroupIndex[] perKeyGroup;
    private final ConcurrentHashMap<String, SegmentStats> segments = new ConcurrentHashMap<>();

    public LogIndex(KeyGroupRange keyGroups) {
        this.keyGroups = keyGroups;
        this.perKeyGroup = new KeyGroupIndex[keyGroups.getNumberOfKeyGroups()];
        for (int i = 0; i < perKeyGroup.length; i++) {
            perKeyGroup[i] = new KeyGroupIndex();
        }
    }

    /**
     * Records that the latest record of {@code entry}, {@code length} bytes, is now in {@code
     * segment}; a tombstone removes the entry. Calls for one key group must not run concurrently.
     */
    public void recordWritten(EntryRef entry, String segment, int length, boolean tombstone) {
        SegmentStats stats = segments.computeIfAbsent(segment, SegmentStats::new);
        KeyGroupIndex index = perKeyGroup[entry.keyGroup() - keyGroups.getStartKeyGroup()];
        if (tombstone) {
            index.remove(entry);
        } else {
            index.put(entry, stats, length);
        }
    }

    /** The segment of the entry's latest record, or null if the entry is not live. */
    public String latestSegment(EntryRef entry) {
        return perKeyGroup[entry.keyGroup() - keyGroups.getStartKeyGroup()].latestSegment(entry);
    }

    /**
     * Compaction copied the entry's record into {@code run}; the index follows unless a checkpoint
     * wrote a newer record meanwhile.
     */
    public void moved(EntryRef entry, Set<String> compacted, String run, int length) {
        perKeyGroup[entry.keyGroup() - keyGroups.getStartKeyGroup()]
                .moveIfStillIn(entry, compacted, segments.computeIfAbsent(run, SegmentStats::new), length);
    }

    /** Stops counting segments that no checkpoint of this backend refers to any more. */
    public void retain(Set<String> referenced) {
        segments.keySet().retainAll(referenced);
    }

    public SegmentStats stats(String segment) {
        return segments.get(segment);
    }

    /** Counts a batch's bytes (records, header, footer, key groups of other owners). */
    public void batchAdded(String segment, long length) {
        segments.computeIfAbsent(segment, SegmentStats::new).added(length);
    }

    public Collection<SegmentStats> segments() {
        return new ArrayList<>(segments.values());
    }

    public long liveBytes() {
        return segments.values().stream().mapToLong(SegmentStats::liveBytes).sum();
    }

    public long totalBytes() {
        return segments.values().stream().mapToLong(SegmentStats::totalBytes).sum();
    }

    public long liveEntries() {
        long n = 0;
        for (KeyGroupIndex index : perKeyGroup) {
            n += index.size();
        }
        return n;
    }
}
