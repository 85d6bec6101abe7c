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

import com.sun.management.GarbageCollectorMXBean;
import com.sun.management.GcInfo;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The live heap: what is in use after a full collection (run with {@code -XX:+UseParallelGC}, whose
 * {@code System.gc()} is one), as the collection left it. The heap in use a moment later counts
 * what a running job allocated meanwhile: on a busy 2-core machine the reading thread may wait for
 * a core long enough for hundreds of MB.
 */
public final class LiveHeap {

    /** A drop smaller than this between two readings counts as settled. */
    private static final long SETTLED_BYTES = 1_000_000;

    private LiveHeap() {}

    /** Bytes in use after a full collection. */
    public static long collected() {
        long[] counts = collectionCounts();
        System.gc();
        // Of the collections since (the full one, and any young one after it), the smallest heap
        // after one is the full collection's.
        long live = Long.MAX_VALUE;
        int i = 0;
        for (GarbageCollectorMXBean collector : collectors()) {
            GcInfo last = collector.getLastGcInfo();
            if (collector.getCollectionCount() > counts[i++] && last != null) {
                live = Math.min(live, heapUsed(last));
            }
        }
        return live != Long.MAX_VALUE ? live : ManagementFactory.getMemoryMXBean().getHeapMemoryUsage().getUsed();
    }

    private static long[] collectionCounts() {
        return collectors().stream().mapToLong(GarbageCollectorMXBean::getCollectionCount).toArray();
    }

    private static List<GarbageCollectorMXBean> collectors() {
        return ManagementFactory.getPlatformMXBeans(GarbageCollectorMXBean.class);
    }

    /** The heap's pools after the collection, in use. */
    private static long heapUsed(GcInfo collection) {
        Set<String> heapPools = new HashSet<>();
        for (MemoryPoolMXBean pool : ManagementFactory.getMemoryPoolMXBeans()) {
            if (pool.getType() == MemoryType.HEAP) {
                heapPools.add(pool.getName());
            }
        }
        return collection.getMemoryUsageAfterGc().entrySet().stream()
                .filter(pool -> heapPools.contains(pool.getKey()))
                .mapToLong(pool -> pool.getValue().getUsed())
                .sum();
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
