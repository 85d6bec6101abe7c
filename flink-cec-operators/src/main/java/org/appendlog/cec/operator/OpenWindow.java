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

package org.appendlog.cec.operator;

import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecRecordKind;
import org.appendlog.cec.log.LogPosition;

import org.apache.flink.streaming.api.windowing.windows.Window;

import java.util.Comparator;
import java.util.Objects;

/** One open window of a CEC operator: its accumulator plus what the CEC policy needs to know. */
final class OpenWindow<K, W extends Window, ACC> {

    /** Firing order of time windows: by end, then by creation. */
    static final Comparator<OpenWindow<?, ?, ?>> BY_END =
            Comparator.<OpenWindow<?, ?, ?>>comparingLong(w -> w.window.maxTimestamp())
                    .thenComparingLong(w -> w.creation);

    final K key;
    final W window;
    final long creation;
    ACC accumulator;
    long count;

    /** True when the accumulator changed since the last footprint (OPEN or CHECK) in the log. */
    boolean changed;
    /** Orders footprints: a larger number is a later footprint; -1 before the first. */
    long footprintSequence = -1;
    /** Processing time of the last footprint. */
    long footprintTime;
    /** Where the last footprint starts in the log. */
    LogPosition footprintPosition;
    /** Neighbours in the order of last footprints ({@link FootprintTracker}); null at the ends. */
    OpenWindow<?, ?, ?> olderFootprint;
    OpenWindow<?, ?, ?> newerFootprint;
    /** The policy clock when the window opened; {@code Long.MIN_VALUE} if only known to be slow. */
    long openTime;
    /** Open for at least H (eventual mode's policy). */
    boolean slow;
    boolean closed;

    OpenWindow(K key, W window, long creation, ACC accumulator, long count) {
        this.key = key;
        this.window = window;
        this.creation = creation;
        this.accumulator = accumulator;
        this.count = count;
    }

    /**
     * A window rebuilt from its footprint in the log at {@code position}: the accumulator of a
     * CHECK, or {@code emptyAccumulator} for an OPEN.
     */
    static <K, W extends Window, ACC> OpenWindow<K, W, ACC> rebuilt(
            CecRecord<K, W, ACC, ?> footprint, long creation, ACC emptyAccumulator, LogPosition position, long openTime) {
        ACC acc = footprint.getKind() == CecRecordKind.CHECK ? footprint.getAccumulator() : emptyAccumulator;
        OpenWindow<K, W, ACC> window =
                new OpenWindow<>(footprint.getKey(), footprint.getWindow(), creation, acc, footprint.getCount());
        window.footprintPosition = position;
        window.openTime = openTime;
        return window;
    }

    Id<K, W> id() {
        return new Id<>(key, window);
    }

    /** Identity of a window in the stream: the key and the window. */
    static final class Id<K, W> {
        private final K key;
        private final W window;

        Id(K key, W window) {
            this.key = key;
            this.window = window;
        }

        @Override
        public boolean equals(Object o) {
            if (!(o instanceof Id)) {
                return false;
            }
            Id<?, ?> that = (Id<?, ?>) o;
            return Objects.equals(key, that.key) && Objects.equals(window, that.window);
        }

        @Override
        public int hashCode() {
            return 31 * Objects.hashCode(key) + Objects.hashCode(window);
        }
    }
}
