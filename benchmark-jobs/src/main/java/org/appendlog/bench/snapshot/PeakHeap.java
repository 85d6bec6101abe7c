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

package org.appendlog.bench.snapshot;

import com.sun.management.GarbageCollectionNotificationInfo;

import javax.management.Notification;
import javax.management.NotificationEmitter;
import javax.management.NotificationListener;
import javax.management.openmbean.CompositeData;

import java.lang.management.GarbageCollectorMXBean;
import java.lang.management.ManagementFactory;
import java.lang.management.MemoryMXBean;
import java.lang.management.MemoryPoolMXBean;
import java.lang.management.MemoryType;
import java.lang.management.MemoryUsage;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * How far the heap rose while an operation ran, above the live heap before it (after a full GC):
 * the used heap sampled every millisecond ({@code MemoryMXBean}; it counts garbage not yet
 * collected, so it depends on when the collector ran), and the heap left after each collection
 * during the operation (GC notifications; what the operation still held then, plus garbage in
 * regions that collection did not visit).
 */
final class PeakHeap {

    private final MemoryMXBean memory = ManagementFactory.getMemoryMXBean();
    private final Set<String> heapPools =
            ManagementFactory.getMemoryPoolMXBeans().stream()
                    .filter(pool -> pool.getType() == MemoryType.HEAP)
                    .map(MemoryPoolMXBean::getName)
                    .collect(Collectors.toSet());
    private final long liveBefore;
    private final Thread sampler;
    private final NotificationListener afterGc = this::collected;
    private volatile boolean running = true;
    private volatile long peakUsed;
    private volatile long peakAfterGc;
    private volatile int collections;

    private PeakHeap() {
        System.gc();
        liveBefore = memory.getHeapMemoryUsage().getUsed();
        peakUsed = liveBefore;
        peakAfterGc = liveBefore;
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            ((NotificationEmitter) gc).addNotificationListener(afterGc, null, null);
        }
        sampler = new Thread(this::sample, "peak-heap sampler");
        sampler.setDaemon(true);
        sampler.start();
    }

    /** Collects the garbage, takes the live heap, and starts watching. */
    static PeakHeap watch() {
        return new PeakHeap();
    }

    private void sample() {
        while (running) {
            peakUsed = Math.max(peakUsed, memory.getHeapMemoryUsage().getUsed());
            try {
                Thread.sleep(1);
            } catch (InterruptedException e) {
                return;
            }
        }
    }

    private void collected(Notification notification, Object handback) {
        if (!GarbageCollectionNotificationInfo.GARBAGE_COLLECTION_NOTIFICATION.equals(
                notification.getType())) {
            return;
        }
        GarbageCollectionNotificationInfo info =
                GarbageCollectionNotificationInfo.from((CompositeData) notification.getUserData());
        long after = 0;
        for (java.util.Map.Entry<String, MemoryUsage> pool :
                info.getGcInfo().getMemoryUsageAfterGc().entrySet()) {
            if (heapPools.contains(pool.getKey())) {
                after += pool.getValue().getUsed();
            }
        }
        peakAfterGc = Math.max(peakAfterGc, after);
        collections++;
    }

    long liveBefore() {
        return liveBefore;
    }

    /** The highest used heap sampled, above the live heap before. */
    long peakUsedAbove() {
        return peakUsed - liveBefore;
    }

    /** The most heap any collection during the operation left, above the live heap before. */
    long peakAfterGcAbove() {
        return peakAfterGc - liveBefore;
    }

    int collections() {
        return collections;
    }

    /** Stops watching; the figures stay. */
    void close() throws InterruptedException {
        running = false;
        sampler.join();
        for (GarbageCollectorMXBean gc : ManagementFactory.getGarbageCollectorMXBeans()) {
            try {
                ((NotificationEmitter) gc).removeNotificationListener(afterGc);
            } catch (javax.management.ListenerNotFoundException ignored) {
                // never added to this collector
            }
        }
    }
}
