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

package org.apache.flink.runtime.state.ttl;

import org.appendlog.statebackend.AppendLogStateBackend;

import org.apache.flink.runtime.state.AbstractKeyedStateBackend;
import org.apache.flink.runtime.state.CheckpointStorage;
import org.apache.flink.runtime.state.StateBackend;
import org.apache.flink.runtime.state.heap.CopyOnWriteStateMap;
import org.apache.flink.runtime.state.storage.JobManagerCheckpointStorage;

import org.junit.jupiter.api.TestTemplate;
import org.junit.jupiter.api.io.TempDir;

import java.nio.file.Path;

import static org.assertj.core.api.Assertions.assertThat;

/**
 * Flink's state time-to-live contract ({@link TtlStateTestBase} from flink-runtime's test jar)
 * for every kind of state: expiry on read and write, visibility of expired values, incremental
 * cleanup, across checkpoints and restores.
 *
 * <p>In Flink's package, because one case of the base is bound to Flink's heap classes and is
 * overridden here ({@link #testIncrementalCleanupWholeState}), which only the same package can
 * do.
 */
public class AppendLogTtlStateTest extends TtlStateTestBase {

    /** The base's count: enough keys for the heap's maps to rehash incrementally. */
    private static final int INC_CLEANUP_ALL_KEYS =
            ((CopyOnWriteStateMap.DEFAULT_CAPACITY >> 1)
                            + (CopyOnWriteStateMap.DEFAULT_CAPACITY >> 2)
                            + 1)
                    * StateBackendTestContext.NUMBER_OF_KEY_GROUPS;

    @TempDir Path logDir;

    @Override
    protected StateBackendTestContext createStateBackendTestContext(TtlTimeProvider timeProvider) {
        return new StateBackendTestContext(timeProvider) {
            @Override
            protected StateBackend createStateBackend() {
                return new AppendLogStateBackend(logDir.toUri().toString());
            }

            @Override
            protected CheckpointStorage createCheckpointStorage() {
                return new JobManagerCheckpointStorage();
            }
        };
    }

    /**
     * Checkpoints append changes, as RocksDB's incremental ones do, so TTL's {@code
     * cleanupFullSnapshot} does not apply to them; Flink's incremental RocksDB test says the same.
     */
    @Override
    public boolean isSavepoint() {
        return false;
    }

    /** The working state is Flink's heap, whose maps offer the incremental cleanup's visitor. */
    @Override
    protected boolean incrementalCleanupSupported() {
        return true;
    }

    /**
     * The base's case, which checks that each expired entry left the heap table by casting the
     * original state to Flink's heap state class; the appendlog's states wrap those, so this reads
     * the original state, and checks that the heap holds no entry at all.
     */
    @Override
    @TestTemplate
    void testIncrementalCleanupWholeState() throws Exception {
        initTest(getConfBuilder(TTL).cleanupIncrementally(5, true).build());
        timeProvider.time = 0;
        for (int i = 0; i < INC_CLEANUP_ALL_KEYS; i++) {
            sbetc.setCurrentKey(Integer.toString(i));
            ctx().update(ctx().updateEmpty);
        }
        timeProvider.time = 120;
        // Every key access runs a step of the incremental cleanup.
        for (int i = 0; i < INC_CLEANUP_ALL_KEYS; i++) {
            sbetc.setCurrentKey(Integer.toString(i));
        }
        for (int i = 0; i < INC_CLEANUP_ALL_KEYS; i++) {
            sbetc.setCurrentKey(Integer.toString(i));
            assertThat(ctx().isOriginalEmptyValue())
                    .withFailMessage("Original state should be cleared")
                    .isTrue();
        }
        assertThat(sbetc.<AbstractKeyedStateBackend<String>>getKeyedStateBackend()
                        .numKeyValueStateEntries())
                .withFailMessage("Expired entries should have left the heap's table")
                .isZero();
    }
}
