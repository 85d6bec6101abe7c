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

package org.appendlog.statebackend.memory;

import java.util.Arrays;
import java.util.function.IntUnaryOperator;

/**
 * Compacts a byte arena in place: the arena holds one slice per entry, starting at {@code
 * at[entry]}, of {@code length.applyAsInt(entry)} bytes (zero or less for a dead entry), and the
 * live slices move to its front. The length comes from the caller, which can read it from the
 * slice's own bytes: a slice is read before any other moves onto it. In place, because a new arena
 * would be copied by the next young collections while the tables that hold it live long, and then
 * grow back, doubling by doubling.
 */
public final class ArenaCompaction {

    private ArenaCompaction() {}

    /** Moves the live slices to the front, in their order in the arena; returns the bytes used. */
    public static int compact(byte[] arena, int[] at, IntUnaryOperator length, int entries) {
        // Live entries by position: moving slices down in that order never overwrites a slice
        // that is still to be moved.
        long[] byPosition = new long[entries];
        int live = 0;
        for (int entry = 0; entry < entries; entry++) {
            if (length.applyAsInt(entry) > 0) {
                byPosition[live++] = ((long) at[entry] << 32) | entry;
            }
        }
        Arrays.sort(byPosition, 0, live);
        int used = 0;
        for (int i = 0; i < live; i++) {
            int entry = (int) byPosition[i];
            int bytes = length.applyAsInt(entry);
            System.arraycopy(arena, at[entry], arena, used, bytes);
            at[entry] = used;
            used += bytes;
        }
        return used;
    }
}
