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

import org.apache.flink.configuration.Configuration;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricConfig;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.reporter.MetricReporter;
import org.apache.flink.metrics.reporter.MetricReporterFactory;

import java.util.Map;
import java.util.Properties;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A metric reporter that keeps the gauges the jobs' operators register, so that the harness reads
 * the heap the appendlog backend reports of its index and change buffer, as a user's reporter
 * would. Flink creates it from its factory in the MiniCluster that runs in the harness's JVM
 * ({@link #configure}); the gauges of every subtask with the same name are summed.
 */
public final class HeapGauges implements MetricReporter {

    private static final String NAME = "harness-heap";
    private static final Map<Gauge<?>, String> GAUGES = new ConcurrentHashMap<>();

    /** Registers the reporter in a cluster's configuration. */
    static void configure(Configuration conf) {
        conf.setString("metrics.reporter." + NAME + ".factory.class", Factory.class.getName());
    }

    /** The sum of the live gauges named {@code name}, or -1 if there is none. */
    static long sum(String name) {
        long sum = 0;
        boolean found = false;
        for (Map.Entry<Gauge<?>, String> gauge : GAUGES.entrySet()) {
            if (gauge.getValue().equals(name) && gauge.getKey().getValue() instanceof Number) {
                sum += ((Number) gauge.getKey().getValue()).longValue();
                found = true;
            }
        }
        return found ? sum : -1;
    }

    @Override
    public void open(MetricConfig config) {}

    @Override
    public void close() {}

    @Override
    public void notifyOfAddedMetric(Metric metric, String metricName, MetricGroup group) {
        if (metric instanceof Gauge) {
            GAUGES.put((Gauge<?>) metric, metricName);
        }
    }

    @Override
    public void notifyOfRemovedMetric(Metric metric, String metricName, MetricGroup group) {
        GAUGES.remove(metric);
    }

    /** Flink's way to create the reporter, named in the configuration. */
    public static final class Factory implements MetricReporterFactory {
        @Override
        public MetricReporter createMetricReporter(Properties properties) {
            return new HeapGauges();
        }
    }
}
