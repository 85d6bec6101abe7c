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

import org.apache.flink.api.common.functions.MapFunction;

/**
 * Passes records through and sleeps {@code millis} after every {@code every} records of its
 * subtask: placed after a network exchange, it backpressures the exchange, so that buffers wait in
 * the network and an unaligned checkpoint persists them.
 */
public class SlowDown<T> implements MapFunction<T, T> {

    private final int every;
    private final long millis;

    private transient long passed;

    public SlowDown(int every, long millis) {
        this.every = every;
        this.millis = millis;
    }

    @Override
    public T map(T value) throws InterruptedException {
        if (++passed % every == 0) {
            Thread.sleep(millis);
        }
        return value;
    }
}
