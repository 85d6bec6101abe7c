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
 * How the arrays that hold per-entry bytes grow: by a quarter, not double. They hold hundreds of
 * thousands to millions of entries, and each byte of slack is paid per entry (a doubled array is
 * on average about 40 % larger than what it holds, one grown by a quarter about 12 %), while
 * copying them more often costs little next to filling them.
 */
public final class ArrayGrowth {

    private ArrayGrowth() {}

    /** A capacity a quarter larger than {@code capacity}, and at least {@code needed}. */
    public static int byAQuarter(int capacity, long needed) {
        long grown = Math.max((long) capacity + (capacity >> 2) + 8, needed);
        if (grown > Integer.MAX_VALUE - 8) {
            if (needed > Integer.MAX_VALUE - 8) {
                throw new IllegalStateException(
                        "An array would need " + needed + " elements, more than a Java array holds");
            }
            return Integer.MAX_VALUE - 8;
        }
        return (int) grown;
    }
}
