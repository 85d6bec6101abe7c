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

package org.appendlog.statebackend;

import org.apache.flink.api.common.typeinfo.Types;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiter;
import org.apache.flink.api.connector.source.util.ratelimit.RateLimiterStrategy;
import org.apache.flink.connector.datagen.source.DataGeneratorSource;

import java.time.Duration;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.CompletionStage;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicLong;

/**
 * The numbers 0 .. {@code records}-1 at {@code perSecond}, from a checkpointed generator (a
 * restore continues where its checkpoint was), pausing once, for {@code pause}, before number
 * {@code pauseAt}. The pause is the rate limiter's: the reader is unavailable rather than its
 * task blocked, so checkpoints and savepoints complete during it, and a job cancelled during it
 * ends there. Once per {@link #reset()}: a restored reader does not pause again. One reader
 * (parallelism 1) per job.
 */
final class PausingInput {

    /** The numbers generated so far by the current reader: the next one to come. */
    private static final AtomicLong NEXT = new AtomicLong();

    private static final AtomicBoolean PAUSED = new AtomicBoolean();

    private PausingInput() {}

    static void reset() {
        NEXT.set(0);
        PAUSED.set(false);
    }

    /** Whether the pause began: every number before {@code pauseAt} has been generated. */
    static boolean paused() {
        return PAUSED.get();
    }

    static DataGeneratorSource<Long> source(
            long records, double perSecond, long pauseAt, Duration pause) {
        return new DataGeneratorSource<>(
                n -> {
                    NEXT.set(n + 1);
                    return n;
                },
                records,
                parallelism -> new PausingRateLimiter(perSecond / parallelism, pauseAt, pause),
                Types.LONG);
    }

    /**
     * Called before each number is generated (the rate-limited reader acquires a permit, then
     * polls one number): the permit before number {@code pauseAt} comes after the pause.
     */
    private static final class PausingRateLimiter implements RateLimiter {
        private final RateLimiter rate;
        private final long pauseAt;
        private final Duration pause;

        PausingRateLimiter(double perSecond, long pauseAt, Duration pause) {
            this.rate = RateLimiterStrategy.perSecond(perSecond).createRateLimiter(1);
            this.pauseAt = pauseAt;
            this.pause = pause;
        }

        @Override
        public CompletionStage<Void> acquire() {
            if (NEXT.get() == pauseAt && PAUSED.compareAndSet(false, true)) {
                return CompletableFuture.runAsync(
                        () -> {},
                        CompletableFuture.delayedExecutor(
                                pause.toMillis(), TimeUnit.MILLISECONDS));
            }
            return rate.acquire();
        }
    }
}
