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

import org.appendlog.statebackend.metrics.AppendLogMetrics;

import javax.management.MBeanServer;
import javax.management.ObjectName;

import java.lang.management.ManagementFactory;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Where a run's live heap went, by component: the growth of a class histogram (the JVM's {@code
 * GC.class_histogram}, taken after a full collection, as {@code jcmd <pid> GC.class_histogram}
 * prints it) between the harness's two heap readings, with the primitive arrays that the appendlog
 * backend's index and change buffer hold taken from its {@code indexHeapBytes} and {@code
 * changeBufferHeapBytes} gauges ({@link HeapGauges}): a histogram cannot tell one {@code long[]}
 * from another.
 */
final class HeapBreakdown {

    static final List<String> COMPONENTS =
            List.of(
                    "Flink's state tables",
                    "timers",
                    "key, namespace and value objects",
                    "index",
                    "change buffer",
                    "other primitive arrays",
                    "other");

    private static final Pattern ROW = Pattern.compile("^\\s*\\d+:\\s+\\d+\\s+(\\d+)\\s+(\\S+)");

    private HeapBreakdown() {}

    /** Bytes per class of the live objects, after the full collection the histogram runs. */
    static Map<String, Long> histogram() throws Exception {
        MBeanServer server = ManagementFactory.getPlatformMBeanServer();
        String text =
                (String)
                        server.invoke(
                                new ObjectName("com.sun.management:type=DiagnosticCommand"),
                                "gcClassHistogram",
                                new Object[] {new String[0]},
                                new String[] {String[].class.getName()});
        Map<String, Long> bytes = new HashMap<>();
        for (String line : text.split("\n")) {
            Matcher row = ROW.matcher(line);
            if (row.find()) {
                bytes.merge(row.group(2), Long.parseLong(row.group(1)), Long::sum);
            }
        }
        return bytes;
    }

    /**
     * The components' growth from {@code before} to {@code after}, in bytes, in the order of
     * {@link #COMPONENTS}; the index and change buffer as their gauges read now (0 without them).
     */
    static Map<String, Long> between(Map<String, Long> before, Map<String, Long> after) {
        long index = Math.max(0, HeapGauges.sum(AppendLogMetrics.INDEX_HEAP_BYTES));
        long buffer = Math.max(0, HeapGauges.sum(AppendLogMetrics.CHANGE_BUFFER_HEAP_BYTES));
        Map<String, Long> growth = new HashMap<>();
        for (String name : union(before, after)) {
            long delta = after.getOrDefault(name, 0L) - before.getOrDefault(name, 0L);
            growth.merge(componentOf(name), delta, Long::sum);
        }
        Map<String, Long> components = new LinkedHashMap<>();
        for (String component : COMPONENTS) {
            components.put(component, growth.getOrDefault(component, 0L));
        }
        components.put("index", index);
        components.put("change buffer", buffer);
        components.merge("other primitive arrays", -index - buffer, Long::sum);
        return components;
    }

    private static Iterable<String> union(Map<String, Long> a, Map<String, Long> b) {
        Map<String, Long> all = new HashMap<>(a);
        all.putAll(b);
        return all.keySet();
    }

    /** The component a class's instances belong to, by the class's name in the histogram. */
    private static String componentOf(String histogramName) {
        if (List.of("[B", "[I", "[J").contains(histogramName)) {
            return "other primitive arrays";
        }
        String type = histogramName.replaceFirst("^\\[+L", "").replaceFirst(";$", "");
        if (type.contains("PriorityQueue") || type.contains("InternalTimer")) {
            return "timers";
        }
        if (type.startsWith("org.apache.flink.runtime.state.heap.")) {
            return "Flink's state tables";
        }
        if (type.equals("java.lang.String")
                || type.equals("java.lang.Long")
                || type.equals("java.lang.Integer")
                || type.equals("org.apache.flink.streaming.api.windowing.windows.TimeWindow")
                || type.startsWith("org.appendlog.bench.")) {
            return "key, namespace and value objects";
        }
        return "other";
    }

    /** One row per run with a breakdown: the job, backend, heap and each component in MB. */
    static String table(List<RunResult> results) {
        StringBuilder t = new StringBuilder("| job | backend | storage | heap |");
        StringBuilder rule = new StringBuilder("|---|---|---|---:|");
        for (String component : COMPONENTS) {
            t.append(' ').append(component).append(" |");
            rule.append("---:|");
        }
        t.append('\n').append(rule).append('\n');
        boolean any = false;
        for (RunResult r : results) {
            if (r.heapBreakdown.isEmpty()) {
                continue;
            }
            any = true;
            t.append(
                    String.format(
                            Locale.ROOT,
                            "| %s | %s | %s | %s |",
                            r.job,
                            r.backend,
                            r.storage,
                            Format.bytes(r.heapBytes)));
            for (long bytes : r.heapBreakdown.values()) {
                t.append(String.format(Locale.ROOT, " %.1f MB |", bytes / 1e6));
            }
            t.append('\n');
        }
        return any ? t.toString() : "";
    }
}
