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
