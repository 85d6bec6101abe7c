package org.appendlog.bench.harness;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;

/**
 * The heap that every configuration of a run shares. When it starts smaller than its maximum,
 * G1 grows it while the runs go on, and each new region's first use costs page faults (the
 * kernel zeroing fresh pages) on whichever thread allocates there, mostly the task thread: a
 * cost that falls on the configurations that happen to grow the heap, not on the backend being
 * measured. Flink starts its TaskManagers with {@code -Xms} equal to {@code -Xmx}; so should the
 * harness's JVM.
 */
final class JvmHeap {

    private final long initial;
    private final long max;

    JvmHeap(long initial, long max) {
        this.initial = initial;
        this.max = max;
    }

    static JvmHeap ofThisJvm() {
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        return new JvmHeap(heap.getInit(), heap.getMax());
    }

    boolean isFixed() {
        return max > 0 && initial >= max;
    }

    /** For the results: the heap's sizes, and what an unfixed heap does to the figures. */
    String describe() {
        String sizes = "JVM heap " + Format.bytes(initial) + " initial, " + Format.bytes(max) + " maximum";
        return isFixed()
                ? sizes
                : sizes + " (not fixed: throughput figures include page faults of heap growth;"
                        + " set -Xms equal to -Xmx in MAVEN_OPTS, as Flink does for TaskManagers)";
    }
}
