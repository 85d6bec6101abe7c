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
 * Reads a hash table's arrays front to back before a burst of probes into it. The tables that
 * deduplicate and index records are probed at random, and each probe of a table that is not in
 * the processor's cache waits for memory several times (slot, entry, key bytes); a sequential
 * read of the whole table runs at memory bandwidth instead, and the probes that follow hit the
 * cache. Warming pays only when the probes are many for the table's size, which {@link #pays}
 * decides.
 */
public final class CacheWarmup {

    private static final int LINE_BYTES = 64;
    /**
     * A probe that misses the cache costs about as much as streaming this many cache lines: a
     * table is warmed if its probes are at least its lines divided by this.
     */
    private static final int LINES_PER_MISSED_PROBE = 16;

    /** Written so that the reads are not optimized away; racy by intent, never read. */
    @SuppressWarnings("unused")
    private static long sink;

    private CacheWarmup() {}

    /** Whether {@code probes} probes into a table of {@code tableBytes} are worth warming for. */
    public static boolean pays(long probes, long tableBytes) {
        return probes * LINES_PER_MISSED_PROBE * LINE_BYTES >= tableBytes;
    }

    public static void read(long[] array, int length) {
        long sum = 0;
        for (int i = 0; i < length; i += LINE_BYTES / Long.BYTES) {
            sum += array[i];
        }
        sink += sum;
    }

    public static void read(int[] array, int length) {
        long sum = 0;
        for (int i = 0; i < length; i += LINE_BYTES / Integer.BYTES) {
            sum += array[i];
        }
        sink += sum;
    }

    public static void read(byte[] array, int length) {
        long sum = 0;
        for (int i = 0; i < length; i += LINE_BYTES) {
            sum += array[i];
        }
        sink += sum;
    }
}
