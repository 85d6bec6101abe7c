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

package org.appendlog.cec.bench;

import org.apache.flink.api.common.functions.MapFunction;
import org.apache.flink.api.java.tuple.Tuple2;

import java.util.concurrent.atomic.AtomicLong;

/**
 * Throws when the event with the armed index (its {@code f1}) first passes, and notes when the
 * restarted job has processed it again: that span is the time from failure to caught-up. Chained
 * in front of the window operator, so it covers the restart, the operator's restore and the
 * replay of the input since the last checkpoint, measured alike for every operator.
 */
final class FailOnce implements MapFunction<Tuple2<String, Long>, Tuple2<String, Long>> {

    private static final long serialVersionUID = 1L;

    private static final AtomicLong FAIL_AT = new AtomicLong(-1);
    private static final AtomicLong FAILED_NANOS = new AtomicLong();
    private static final AtomicLong RECOVERED_NANOS = new AtomicLong();

    /** The next job fails once at event {@code index}; a negative index: never. */
    static void arm(long index) {
        FAIL_AT.set(index);
        FAILED_NANOS.set(0);
        RECOVERED_NANOS.set(0);
    }

    /** From the failure to caught-up in the last job, or -1 if it did not fail and catch up. */
    static long recoveryMillis() {
        long failed = FAILED_NANOS.get();
        long recovered = RECOVERED_NANOS.get();
        return failed == 0 || recovered == 0 ? -1 : (recovered - failed) / 1_000_000;
    }

    @Override
    public Tuple2<String, Long> map(Tuple2<String, Long> e) {
        if (e.f1 == FAIL_AT.get()) {
            if (FAILED_NANOS.compareAndSet(0, System.nanoTime())) {
                throw new RuntimeException("Injected benchmark failure at event " + e.f1);
            }
            RECOVERED_NANOS.compareAndSet(0, System.nanoTime());
        }
        return e;
    }
}
