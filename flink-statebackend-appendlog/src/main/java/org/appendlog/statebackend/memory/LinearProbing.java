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

/**
 * Where probe runs start and go in the open-addressing table of {@link TaggedSlots}, and when it
 * must grow. The table may have any length: the home slot is the mixed hash scaled to the length
 * (Lemire's multiply-shift), so it can grow by a quarter and stay between about 55 % and 70 %
 * full. A power-of-two table kept at most half full holds two to four slots per entry; this one,
 * 1.4 to 1.8, which the index pays per live entry for as long as the entry lives. Linear probing
 * at 70 % reads about two slots to find an entry and six to learn that one is absent, mostly in
 * one cache line. The change buffer's tables ({@link HashSlots}) live for one checkpoint interval
 * and keep the power-of-two layout (see docs/decisions/change-buffer-tables.md).
 */
public final class LinearProbing {

    /** The length of a new table. */
    public static final int MIN_SLOTS = 16;
    private static final double MAX_LOAD = 0.7;

    private LinearProbing() {}

    /** The slot where the probe run of {@code hash} starts in a table of {@code length} slots. */
    public static int home(int hash, int length) {
        // The multiply mixes the low bits into the high ones, which the scaling keeps.
        return (int) (((hash * 0x9E3779B9) & 0xffffffffL) * length >>> 32);
    }

    /** The slot after {@code slot}, wrapping around at the end of the table. */
    public static int next(int slot, int length) {
        return slot + 1 == length ? 0 : slot + 1;
    }

    /** Whether a table of {@code length} slots holding {@code size} entries must grow. */
    public static boolean overfull(int size, int length) {
        return size > length * MAX_LOAD;
    }
}
