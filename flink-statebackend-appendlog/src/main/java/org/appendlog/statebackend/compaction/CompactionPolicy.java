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

package org.appendlog.statebackend.compaction;

import org.appendlog.statebackend.index.SegmentStats;

import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.List;

/**
 * Which segments to compact. The trigger is Kafka's: the closed segments' dirty ratio (dead bytes
 * / total bytes) must reach {@code min-dirty-ratio}, and a segment must not have been written for
 * {@code min-lag}. The choice is the log-structured file system cleaner's cost-benefit rule:
 * among the segments that are themselves at least {@code min-dirty-ratio} dead, those with the
 * highest {@code (1 - u) * age / (1 + u)} first, where {@code u} is the live fraction; old, mostly
 * dead segments give the most space for the least copying.
 *
 * <p>With sealed segments, one per checkpoint's batch, a second trigger bounds their number: once
 * the segments reach {@code maxSegments}, the smallest are merged, live or not, so that half as
 * many remain. Merging the smallest first rewrites a large run only rarely, as a size-tiered
 * merge does.
 */
final class CompactionPolicy {

    private final double minDirtyRatio;
    private final Duration minLag;
    private final long maxInputBytes;
    private final int maxSegments;

    /** @param maxSegments segments that trigger a merge of the smallest; at least 2 */
    CompactionPolicy(double minDirtyRatio, Duration minLag, long maxInputBytes, int maxSegments) {
        this.minDirtyRatio = minDirtyRatio;
        this.minLag = minLag;
        this.maxInputBytes = maxInputBytes;
        this.maxSegments = maxSegments;
    }

    /**
     * Selects from {@code closed} (the segments the current checkpoint refers to, but the one
     * being appended to) the segments to compact now, best first; empty if none should be.
     */
    List<SegmentStats> select(Collection<SegmentStats> closed, long nowMillis) {
        if (closed.size() >= maxSegments) {
            return smallest(closed);
        }
        if (closed.isEmpty() || SegmentStats.dirtyRatio(closed) < minDirtyRatio) {
            return List.of();
        }
        List<SegmentStats> candidates = new ArrayList<>();
        // A segment is worth cleaning only if it is itself at least that dirty: rewriting a
        // mostly live segment (say, the one every key was first written to) on every pass would
        // copy the whole state over and over for little space. The log's dirty ratio reaching
        // the minimum means some segment does.
        double maxUtilization = 1.0 - minDirtyRatio;
        for (SegmentStats s : closed) {
            if (nowMillis - s.lastWriteMillis() >= minLag.toMillis()
                    && s.utilization() <= maxUtilization
                    && s.utilization() < 1.0) {
                candidates.add(s);
            }
        }
        candidates.sort(Comparator.comparingDouble((SegmentStats s) -> -score(s, nowMillis)));
        List<SegmentStats> chosen = new ArrayList<>();
        long input = 0;
        for (SegmentStats s : candidates) {
            if (!chosen.isEmpty() && input + s.totalBytes() > maxInputBytes) {
                break;
            }
            chosen.add(s);
            input += s.totalBytes();
        }
        return chosen;
    }

    /**
     * The smallest segments, as many as merging them into one leaves half of {@code maxSegments}
     * (at least two). Whatever their bytes: a pass held to the input bound could merge fewer
     * segments than checkpoints add, and the count would grow without bound.
     */
    private List<SegmentStats> smallest(Collection<SegmentStats> closed) {
        List<SegmentStats> bySize = new ArrayList<>(closed);
        bySize.sort(Comparator.comparingLong(SegmentStats::totalBytes));
        return bySize.subList(0, Math.max(2, closed.size() - maxSegments / 2 + 1));
    }

    private static double score(SegmentStats s, long nowMillis) {
        double u = s.utilization();
        double age = Math.max(1, nowMillis - s.lastWriteMillis());
        return (1 - u) * age / (1 + u);
    }
}
