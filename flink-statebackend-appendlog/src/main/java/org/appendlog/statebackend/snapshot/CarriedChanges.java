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

package org.appendlog.statebackend.snapshot;

/**
 * The changes a checkpoint's batch carries: every entry changed after the barrier of checkpoint
 * {@link #after} (the last one known complete when it listed its batches: captures go only once a
 * checkpoint holding them completes) up to its own barrier, {@link #upTo}, with its value there.
 * A full batch carries every change up to its barrier. A log whose batches carry intervals that
 * together cover a batch's interval holds every change that batch carries.
 */
final class CarriedChanges {

    final long after;
    final long upTo;

    private CarriedChanges(long after, long upTo) {
        this.after = after;
        this.upTo = upTo;
    }

    static CarriedChanges of(WrittenCheckpoint checkpoint, long checkpointId) {
        return new CarriedChanges(checkpoint.full ? Long.MIN_VALUE : checkpoint.builtOn, checkpointId);
    }

    /**
     * The earliest checkpoint {@code s} such that {@code intervals} together carry every change
     * after the barrier of {@code s} up to that of {@code from}; {@code from} if none reaches it.
     */
    static long earliestCoveredBarrier(long from, Iterable<CarriedChanges> intervals) {
        long since = from;
        boolean extended = true;
        while (extended) {
            extended = false;
            for (CarriedChanges interval : intervals) {
                if (interval.after < since && interval.upTo >= since) {
                    since = interval.after;
                    extended = true;
                }
            }
        }
        return since;
    }
}
