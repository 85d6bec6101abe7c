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

package org.appendlog.statebackend.compaction;

/** Paces compaction I/O to a byte rate, so compaction never starves checkpoints of bandwidth. */
final class IoThrottle {

    private final long bytesPerSecond;
    private final long startNanos = System.nanoTime();
    private long bytes;

    /** {@code bytesPerSecond} of 0 means unlimited. */
    IoThrottle(long bytesPerSecond) {
        this.bytesPerSecond = bytesPerSecond;
    }

    /** Accounts for {@code n} bytes and sleeps until the rate allows them. */
    synchronized void acquire(long n) throws InterruptedException {
        if (bytesPerSecond <= 0) {
            return;
        }
        bytes += n;
        long dueNanos = startNanos + bytes * 1_000_000_000L / bytesPerSecond;
        long waitNanos = dueNanos - System.nanoTime();
        if (waitNanos > 0) {
            Thread.sleep(waitNanos / 1_000_000, (int) (waitNanos % 1_000_000));
        }
    }
}
