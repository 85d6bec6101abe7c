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

package org.appendlog.bench.harness;

import com.sun.management.HotSpotDiagnosticMXBean;

import java.lang.management.ManagementFactory;
import java.lang.management.MemoryUsage;

/**
 * The heap that every configuration of a run shares. The first use of each heap region costs
 * page faults (the kernel zeroing fresh pages) on whichever thread allocates there, mostly a
 * task thread: a cost that falls on the configurations that happen to run while the heap grows
 * or is first touched, not on the backend being measured. Flink starts its TaskManagers with
 * {@code -Xms} equal to {@code -Xmx}, and a long-running TaskManager has touched its whole heap
 * within minutes; {@code -XX:+AlwaysPreTouch} gives the harness's JVM that state from the first
 * configuration on, whatever the order.
 */
final class JvmHeap {

    private final long initial;
    private final long max;
    private final boolean preTouched;

    JvmHeap(long initial, long max, boolean preTouched) {
        this.initial = initial;
        this.max = max;
        this.preTouched = preTouched;
    }

    static JvmHeap ofThisJvm() {
        MemoryUsage heap = ManagementFactory.getMemoryMXBean().getHeapMemoryUsage();
        return new JvmHeap(heap.getInit(), heap.getMax(), alwaysPreTouch());
    }

    /** False on a JVM that does not have the option (not HotSpot). */
    private static boolean alwaysPreTouch() {
        HotSpotDiagnosticMXBean vm = ManagementFactory.getPlatformMXBean(HotSpotDiagnosticMXBean.class);
        try {
            return vm != null && Boolean.parseBoolean(vm.getVMOption("AlwaysPreTouch").getValue());
        } catch (IllegalArgumentException noSuchOption) {
            return false;
        }
    }

    /** Whether no configuration pays for the heap's first use: fixed in size and touched up front. */
    boolean isReady() {
        return max > 0 && initial >= max && preTouched;
    }

    /** For the results: the heap's sizes, and what a heap that is not ready does to the figures. */
    String describe() {
        String sizes = "JVM heap " + Format.bytes(initial) + " initial, " + Format.bytes(max) + " maximum";
        return isReady()
                ? sizes + ", pre-touched"
                : sizes + (preTouched ? ", pre-touched" : ", not pre-touched")
                        + " (throughput figures include the page faults of the heap's first use;"
                        + " set -Xms equal to -Xmx and -XX:+AlwaysPreTouch in MAVEN_OPTS)";
    }
}
