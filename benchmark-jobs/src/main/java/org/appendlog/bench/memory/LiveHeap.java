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

package org.appendlog.bench.memory;

import java.lang.management.ManagementFactory;
import java.time.Duration;

/**
 * The live heap: what is in use after a full collection (run with {@code -XX:+UseParallelGC}, whose
 * {@code System.gc()} is one).
 */
public final class LiveHeap {

    /** A drop smaller than this between two readings counts as settled. */
    private static final long SETTLED_BYTES = 1_000_000;

    private LiveHeap() {}

    /** Bytes in use after a full collection. */
    public static long collected() {
        System.gc();
        return ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    /**
     * Bytes in use after a full collection once the heap has settled: threads of a closed backend
     * or cluster hold memory for a while after it closed, which a single reading would count. Reads
     * every {@code apart} until a collection frees less than 1 MB more than the one before, at most
     * {@code readings} times more; returns the last reading.
     */
    public static long settled(Duration apart, int readings) throws InterruptedException {
        long previous = collected();
        for (int i = 0; i < readings; i++) {
            Thread.sleep(apart.toMillis());
            long now = collected();
            if (previous - now < SETTLED_BYTES) {
                return now;
            }
            previous = now;
        }
        return previous;
    }
}
