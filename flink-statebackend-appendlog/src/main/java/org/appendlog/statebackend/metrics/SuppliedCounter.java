package org.appendlog.statebackend.metrics;

import org.apache.flink.metrics.Counter;

import java.util.function.LongSupplier;

/**
 * A counter whose count the backend keeps elsewhere: reported as a counter, so that reporters and
 * alerts treat the figure as cumulative (rates, increases), while the code that counts keeps its
 * own field.
 */
public final class SuppliedCounter implements Counter {

    private final LongSupplier count;

    public SuppliedCounter(LongSupplier count) {
        this.count = count;
    }

    @Override
    public void inc() {
        throw new UnsupportedOperationException("Counted by the backend, not through the metric");
    }

    @Override
    public void inc(long n) {
        inc();
    }

    @Override
    public void dec() {
        inc();
    }

    @Override
    public void dec(long n) {
        inc();
    }

    @Override
    public long getCount() {
        return count.getAsLong();
    }
}
