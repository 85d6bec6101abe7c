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

package org.appendlog.statebackend.faults;

import java.io.IOException;
import java.io.InterruptedIOException;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * One armed fault of the {@link FaultyFileSystem}: the {@code nth} operation of kind {@link Op} on
 * a path containing {@code pathPart}, done by a thread whose name starts with {@code threadPrefix},
 * triggers {@link Action}. At most one fault is armed at a time (see {@link #arm}).
 */
public final class Fault {

    /** File system operations that can fail. */
    public enum Op {
        CREATE,
        WRITE,
        SYNC,
        CLOSE,
        OPEN,
        READ
    }

    /** What happens when the fault fires. */
    public enum Action {
        /** An IOException; a failing WRITE first writes half of its bytes (a torn write). */
        THROW,
        /**
         * The operation blocks until its thread is interrupted, then throws an
         * InterruptedIOException, as HDFS's client does.
         */
        BLOCK_UNTIL_INTERRUPTED,
        /** Runs the fault's callback (e.g. restart a DataNode), then does the operation. */
        CALLBACK
    }

    /** Something done to the world when a CALLBACK fault fires. */
    @FunctionalInterface
    public interface Callback {
        void run() throws Exception;
    }

    private static volatile Fault armed;

    final Op op;
    private final String pathPart;
    private final String threadPrefix;
    private final int nth;
    private final Action action;
    private final Callback callback;
    private final int minLength;
    private final AtomicInteger seen = new AtomicInteger();
    private final CountDownLatch fired = new CountDownLatch(1);
    private volatile Thread blockedThread;

    private Fault(
            Op op,
            String pathPart,
            String threadPrefix,
            int minLength,
            int nth,
            Action action,
            Callback callback) {
        this.op = op;
        this.minLength = minLength;
        this.pathPart = pathPart;
        this.threadPrefix = threadPrefix;
        this.nth = nth;
        this.action = action;
        this.callback = callback;
    }

    public static Fault on(Op op, String pathPart, int nth, Action action) {
        return new Fault(op, pathPart, "", 0, nth, action, null);
    }

    /** The same fault, counting only writes of at least {@code bytes} bytes. */
    public Fault ofWritesOfAtLeast(int bytes) {
        return new Fault(op, pathPart, threadPrefix, bytes, nth, action, callback);
    }

    /** The same fault, but only for operations of threads whose name starts with {@code prefix}. */
    public Fault byThread(String prefix) {
        return new Fault(op, pathPart, prefix, minLength, nth, action, callback);
    }

    public static Fault callback(Op op, String pathPart, int nth, Callback callback) {
        return new Fault(op, pathPart, "", 0, nth, Action.CALLBACK, callback);
    }

    /** Makes {@code fault} the armed one (null disarms). */
    public static void arm(Fault fault) {
        armed = fault;
    }

    public static void disarm() {
        armed = null;
    }

    public boolean hasFired() {
        return fired.getCount() == 0;
    }

    /** Waits until the fault fired; for BLOCK faults, until its thread is blocked. */
    public boolean awaitFired(long seconds) throws InterruptedException {
        return fired.await(seconds, TimeUnit.SECONDS);
    }

    /** The thread blocked by a BLOCK_UNTIL_INTERRUPTED fault. */
    public Thread blockedThread() {
        return blockedThread;
    }

    @Override
    public String toString() {
        return action + " at " + op + " #" + nth + " of *" + pathPart + "*"
                + (minLength > 0 ? " (writes of " + minLength + "+ bytes)" : "")
                + (threadPrefix.isEmpty() ? "" : " by " + threadPrefix + "*");
    }

    /**
     * Called by the file system before each operation; returns true if a THROW fault fires now
     * (the caller then fails the operation in its own way).
     */
    static boolean before(Op op, String path) throws IOException {
        return before(op, path, Integer.MAX_VALUE);
    }

    /** As {@link #before(Op, String)}, for an operation on {@code length} bytes. */
    static boolean before(Op op, String path, int length) throws IOException {
        Fault fault = armed;
        if (fault == null
                || fault.op != op
                || length < fault.minLength
                || !path.contains(fault.pathPart)
                || !Thread.currentThread().getName().startsWith(fault.threadPrefix)
                || fault.seen.incrementAndGet() != fault.nth) {
            return false;
        }
        switch (fault.action) {
            case THROW:
                fault.fired.countDown();
                return true;
            case BLOCK_UNTIL_INTERRUPTED:
                fault.blockedThread = Thread.currentThread();
                fault.fired.countDown();
                try {
                    new CountDownLatch(1).await();
                } catch (InterruptedException e) {
                    // Keep the flag, as a real interruptible channel does.
                    Thread.currentThread().interrupt();
                    throw new InterruptedIOException(op + " of " + path + " interrupted");
                }
                throw new IllegalStateException("unreachable");
            case CALLBACK:
                try {
                    fault.callback.run();
                } catch (Exception e) {
                    throw new IOException("fault callback failed", e);
                } finally {
                    fault.fired.countDown();
                }
                return false;
            default:
                throw new IllegalStateException(String.valueOf(fault.action));
        }
    }

    static IOException injected(Op op, String path) {
        return new IOException("Injected fault: " + op + " of " + path + " failed");
    }
}
