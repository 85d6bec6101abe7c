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

package org.appendlog.cec.operator;

import org.appendlog.cec.log.LogPosition;
import org.appendlog.cec.log.SegmentSync;

import org.apache.flink.runtime.state.OperatorStateHandle;
import org.apache.flink.runtime.state.SnapshotResult;
import org.apache.flink.runtime.state.StateUtil;
import org.apache.flink.util.concurrent.FutureUtils;

import org.slf4j.Logger;
import org.slf4j.LoggerFactory;

import java.util.concurrent.FutureTask;
import java.util.concurrent.RunnableFuture;

/**
 * The operator-state snapshot of a checkpoint that completes only once the persisted stream is
 * durable up to the checkpoint's position. Flink runs it in the checkpoint's asynchronous part
 * and acknowledges the checkpoint after it, so the sync costs the task thread nothing and a
 * checkpoint never names bytes that a crash could lose.
 */
final class DurableLogSnapshot extends FutureTask<SnapshotResult<OperatorStateHandle>> {

    private static final Logger LOG = LoggerFactory.getLogger(DurableLogSnapshot.class);

    private final RunnableFuture<SnapshotResult<OperatorStateHandle>> state;

    DurableLogSnapshot(
            SegmentSync log, LogPosition position, RunnableFuture<SnapshotResult<OperatorStateHandle>> state) {
        super(() -> {
            long start = System.nanoTime();
            log.sync();
            LOG.debug(
                    "Synced CEC log segment {} for a checkpoint at {} in {} ms",
                    log.segment(), position, (System.nanoTime() - start) / 1_000_000);
            return FutureUtils.runIfNotDoneAndGet(state);
        });
        this.state = state;
    }

    /** Also discards the operator-state snapshot, which this task would have returned. */
    @Override
    public boolean cancel(boolean mayInterruptIfRunning) {
        boolean cancelled = super.cancel(mayInterruptIfRunning);
        if (cancelled) {
            try {
                StateUtil.discardStateFuture(state);
            } catch (Exception e) {
                LOG.warn("Could not discard the operator state of a cancelled CEC checkpoint", e);
            }
        }
        return cancelled;
    }
}
