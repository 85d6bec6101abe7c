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

package org.appendlog.statebackend.tracking;

import org.appendlog.statebackend.AppendLogStateBackend;
import org.appendlog.statebackend.BackendFixture;
import org.appendlog.statebackend.BackendHarness;

import org.apache.flink.api.common.functions.AggregateFunction;
import org.apache.flink.api.common.state.AggregatingStateDescriptor;
import org.apache.flink.api.common.state.ReducingStateDescriptor;
import org.apache.flink.api.common.typeutils.base.LongSerializer;
import org.apache.flink.runtime.state.KeyedStateHandle;
import org.apache.flink.runtime.state.internal.InternalAggregatingState;
import org.apache.flink.runtime.state.internal.InternalReducingState;

import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.extension.RegisterExtension;

import java.io.IOException;
import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/**
 * Aggregating and reducing states with immutable values log the value an added element merged
 * into: the log must hold what the heap holds, per namespace, with the function of the latest
 * registration.
 */
class MergingStateCheckpointTest {

    private static final int KEYS = 1_000;
    private static final List<Long> WINDOWS = List.of(10L, 20L);

    @RegisterExtension final BackendFixture fixture = new BackendFixture();

    @Test
    void restoresWhatWasMergedUnderEveryNamespace() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        KeyedStateHandle second;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            InternalAggregatingState<Integer, Long, Long, Long, Long> sums = sums(harness, SUM);
            InternalReducingState<Integer, Long, Long> maxima = maxima(harness);
            addToAll(harness, sums, maxima, 1);
            harness.checkpoint(1);
            // the second checkpoint is incremental: it holds the merged values logged since
            addToAll(harness, sums, maxima, 2);
            second = harness.checkpoint(2);
        }
        try (BackendHarness restored = fixture.restore(stateBackend, second)) {
            InternalAggregatingState<Integer, Long, Long, Long, Long> sums = sums(restored, SUM);
            InternalReducingState<Integer, Long, Long> maxima = maxima(restored);
            for (int key = 0; key < KEYS; key++) {
                restored.backend.setCurrentKey(key);
                for (long window : WINDOWS) {
                    sums.setCurrentNamespace(window);
                    maxima.setCurrentNamespace(window);
                    assertThat(sums.get()).isEqualTo(3 * (key + window));
                    assertThat(maxima.get()).isEqualTo(2 * (key + window));
                }
            }
        }
    }

    @Test
    void mergesWithTheFunctionOfTheLatestRegistration() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        KeyedStateHandle summed;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            InternalAggregatingState<Integer, Long, Long, Long, Long> sums = sums(harness, SUM);
            harness.checkpoint(1);
            add(harness, sums, 7, 10L, 5);
            summed = harness.checkpoint(2);
        }
        KeyedStateHandle multiplied;
        try (BackendHarness restored = fixture.restore(stateBackend, summed)) {
            // the restored state is registered again, with another function
            InternalAggregatingState<Integer, Long, Long, Long, Long> products =
                    sums(restored, PRODUCT);
            restored.checkpoint(3);
            add(restored, products, 7, 10L, 3);
            assertThat(products.get()).isEqualTo(15);
            multiplied = restored.checkpoint(4);
        }
        assertThat(restoredSum(stateBackend, multiplied, 7, 10L)).isEqualTo(15);
    }

    @Test
    void aFailingFunctionLeavesTheValueAndTheLogAsTheyWere() throws Exception {
        AppendLogStateBackend stateBackend = fixture.backend();
        KeyedStateHandle handle;
        try (BackendHarness harness = fixture.open(stateBackend)) {
            InternalAggregatingState<Integer, Long, Long, Long, Long> sums = sums(harness, SUM);
            harness.checkpoint(1);
            add(harness, sums, 3, 10L, 4);
            assertThatThrownBy(() -> add(harness, sums, 3, 10L, -1))
                    .isInstanceOf(IOException.class)
                    .hasMessageContaining("'sums'")
                    .hasRootCauseMessage("negative: -1");
            assertThat(sums.get()).isEqualTo(4);
            handle = harness.checkpoint(2);
        }
        assertThat(restoredSum(stateBackend, handle, 3, 10L)).isEqualTo(4);
    }

    /** The sum of {@code key} in {@code window} that {@code handle} restores. */
    private Long restoredSum(
            AppendLogStateBackend stateBackend,
            KeyedStateHandle handle,
            int key,
            long window)
            throws Exception {
        try (BackendHarness restored = fixture.restore(stateBackend, handle)) {
            InternalAggregatingState<Integer, Long, Long, Long, Long> sums = sums(restored, SUM);
            restored.backend.setCurrentKey(key);
            sums.setCurrentNamespace(window);
            return sums.get();
        }
    }

    private static void addToAll(
            BackendHarness harness,
            InternalAggregatingState<Integer, Long, Long, Long, Long> sums,
            InternalReducingState<Integer, Long, Long> maxima,
            long times)
            throws Exception {
        for (int key = 0; key < KEYS; key++) {
            for (long window : WINDOWS) {
                add(harness, sums, key, window, times * (key + window));
                maxima.setCurrentNamespace(window);
                maxima.add(times * (key + window));
                maxima.add(key + window);
            }
        }
    }

    private static void add(
            BackendHarness harness,
            InternalAggregatingState<Integer, Long, Long, Long, Long> state,
            int key,
            long window,
            long value)
            throws Exception {
        harness.backend.setCurrentKey(key);
        state.setCurrentNamespace(window);
        state.add(value);
    }

    @SuppressWarnings("unchecked")
    private static InternalAggregatingState<Integer, Long, Long, Long, Long> sums(
            BackendHarness harness, AggregateFunction<Long, Long, Long> function) throws Exception {
        return (InternalAggregatingState<Integer, Long, Long, Long, Long>)
                harness.backend.getOrCreateKeyedState(LongSerializer.INSTANCE, descriptor(function));
    }

    private static AggregatingStateDescriptor<Long, Long, Long> descriptor(
            AggregateFunction<Long, Long, Long> function) {
        return new AggregatingStateDescriptor<>("sums", function, LongSerializer.INSTANCE);
    }

    @SuppressWarnings("unchecked")
    private static InternalReducingState<Integer, Long, Long> maxima(BackendHarness harness)
            throws Exception {
        return (InternalReducingState<Integer, Long, Long>)
                harness.backend.getOrCreateKeyedState(
                        LongSerializer.INSTANCE,
                        new ReducingStateDescriptor<>("maxima", Math::max, LongSerializer.INSTANCE));
    }

    private static final AggregateFunction<Long, Long, Long> SUM = new Combining(false);
    private static final AggregateFunction<Long, Long, Long> PRODUCT = new Combining(true);

    /** Sums or multiplies; refuses negative values, to fail inside the state's merge. */
    private static final class Combining implements AggregateFunction<Long, Long, Long> {

        private final boolean multiply;

        Combining(boolean multiply) {
            this.multiply = multiply;
        }

        @Override
        public Long createAccumulator() {
            return multiply ? 1L : 0L;
        }

        @Override
        public Long add(Long value, Long accumulator) {
            if (value < 0) {
                throw new IllegalArgumentException("negative: " + value);
            }
            return multiply ? accumulator * value : accumulator + value;
        }

        @Override
        public Long getResult(Long accumulator) {
            return accumulator;
        }

        @Override
        public Long merge(Long a, Long b) {
            return multiply ? a * b : a + b;
        }
    }
}
