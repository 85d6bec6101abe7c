package org.appendlog.bench.compaction;

import org.apache.flink.metrics.Gauge;
import org.apache.flink.metrics.MetricGroup;
import org.apache.flink.metrics.groups.UnregisteredMetricsGroup;

import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/** A metric group that keeps the gauges registered on it, so the sweep reads what a user would. */
public final class MetricsRecorder extends UnregisteredMetricsGroup {

    private final Map<String, Gauge<?>> gauges;

    public MetricsRecorder() {
        this(new ConcurrentHashMap<>());
    }

    private MetricsRecorder(Map<String, Gauge<?>> gauges) {
        this.gauges = gauges;
    }

    @Override
    public <T, G extends Gauge<T>> G gauge(String name, G gauge) {
        gauges.put(name, gauge);
        return gauge;
    }

    @Override
    public MetricGroup addGroup(String name) {
        return new MetricsRecorder(gauges);
    }

    public long value(String name) {
        Gauge<?> gauge = gauges.get(name);
        return gauge == null ? 0 : ((Number) gauge.getValue()).longValue();
    }
}
