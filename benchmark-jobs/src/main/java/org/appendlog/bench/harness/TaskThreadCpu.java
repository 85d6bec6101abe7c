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

import java.lang.management.ManagementFactory;
import java.lang.management.ThreadInfo;
import java.lang.management.ThreadMXBean;

/**
 * The CPU time of the task thread that runs the job's counting operator: Flink names a task's
 * thread after its chain of operators, starting with the first ("count-per-word -> latest-count
 * (1/1)#0"). Against the JVM's CPU time it separates what the counting task spends per record
 * from what every other thread (the source, the backend's, Flink's, the collector) spends.
 */
final class TaskThreadCpu {

    private final ThreadMXBean threads = ManagementFactory.getThreadMXBean();
    private final String operator;
    private long threadId = -1;

    TaskThreadCpu(String operator) {
        this.operator = operator;
    }

    /**
     * The task thread's CPU time so far, or -1 if no live thread runs the operator or the JVM
     * does not measure threads' CPU time. The thread is looked up until found, and again once
     * it ended (a restarted task runs in a new thread).
     */
    long nanos() {
        if (!threads.isThreadCpuTimeSupported()) {
            return -1;
        }
        long nanos = threadId < 0 ? -1 : threads.getThreadCpuTime(threadId);
        if (nanos < 0) {
            threadId = find();
            nanos = threadId < 0 ? -1 : threads.getThreadCpuTime(threadId);
        }
        return nanos;
    }

    private long find() {
        for (ThreadInfo info : threads.getThreadInfo(threads.getAllThreadIds())) {
            if (info != null && info.getThreadName().startsWith(operator + " ")) {
                return info.getThreadId();
            }
        }
        return -1;
    }
}
