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

package org.appendlog.testing;

import org.apache.flink.metrics.Counter;
import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.Metric;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.SimpleCounter;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * A metric group that keeps the gauges and counters registered on it and on its subgroups, by
 * name, so that tests and benchmarks read what a user would.
 */
public final class MetricsRecorder extends UnregisteredMetricsGroup {

    private final Map<String, Metric> metrics;

    public MetricsRecorder() {
        this(new ConcurrentHashMap<>());
    }

    private MetricsRecorder(Map<String, Metric> metrics) {
        this.metrics = metrics;
    }

    @Override
    public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
        metrics.put(name, gauge);
        return gauge;
    }

    @Override
    public Counter counter(String name) {
        return counter(name, new SimpleCounter());
    }

    @Override
    public <C extends Counter> C counter(String name, C counter) {
        metrics.put(name, counter);
        return counter;
    }

    @Override
    public MetricGroup addGroup(String name) {
        return new MetricsRecorder(metrics);
    }

    /** The metric registered under {@code name}, or null. */
    public Metric metric(String name) {
        return metrics.get(name);
    }

    /** The count of a counter or the value of a numeric gauge; 0 if none is registered. */
    public long value(String name) {
        Metric metric = metrics.get(name);
        if (metric instanceof Counter) {
            return ((Counter) metric).getCount();
        }
        return metric == null ? 0 : ((Number) ((Gauge<?>) metric).getValue()).longValue();
    }
}
