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

import org.apache.flink.api.common.typeutils.TypeSerializer;
import org.apache.flink.api.common.typeutils.base.IntSerializer;
import org.apache.flink.api.common.typeutils.base.StringSerializer;
import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.runtime.state.VoidNamespace;
import org.apache.flink.runtime.state.VoidNamespaceSerializer;

import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.concurrent.ExecutorService;
import java.util.concurrent.Executors;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** The change buffer keeps exactly the latest write of every entry, across chunks and in-place deduplication. */
class ChangeBufferTest {

    @SuppressWarnings("unchecked")
    private static final TypeSerializer<Object> KEYS = (TypeSerializer<Object>) (TypeSerializer<?>) IntSerializer.INSTANCE;

    @SuppressWarnings("unchecked")
    private static final TypeSerializer<Object> NAMESPACES = (TypeSerializer<Object>) (TypeSerializer<?>) VoidNamespaceSerializer.INSTANCE;

    @SuppressWarnings("unchecked")
    private static final TypeSerializer<Object> VALUES = (TypeSerializer<Object>) (TypeSerializer<?>) StringSerializer.INSTANCE;

    private ExecutorService deduplicator;

    @BeforeEach
    void startDeduplicator() {
        deduplicator = Executors.newSingleThreadExecutor();
    }

    @AfterEach
    void stopDeduplicator() {
        deduplicator.shutdownNow();
    }

    @Test
    void keepsTheLatestWriteOfEachEntryAcrossChunks() throws IOException {
        assertLatestKept(new ChangeBuffer(Long.MAX_VALUE, deduplicator), 400_000);
    }

    @Test
    void deduplicatesInPlaceWhenOverItsLimit() throws IOException {
        assertLatestKept(new ChangeBuffer(2L << 20, deduplicator), 400_000);
    }

    /** Without a background thread, the barrier deduplicates every chunk itself. */
    @Test
    void keepsTheLatestWriteWhenNothingDeduplicatesInTheBackground() throws IOException {
        assertLatestKept(new ChangeBuffer(Long.MAX_VALUE, task -> {}), 400_000);
    }

    /** Buffers drained one after another, each while the background thread may still work on it. */
    @Test
    void eachDrainHoldsTheWritesSinceThePreviousOne() throws IOException {
        ChangeBuffer buffer = new ChangeBuffer(Long.MAX_VALUE, deduplicator);
        for (int round = 0; round < 5; round++) {
            assertLatestKept(buffer, 100_000 + round);
        }
    }

    /**
     * Intervals of very different sizes, so that the partitions' tables are reused after larger
     * and after smaller intervals, and dropped when several intervals in a row left them mostly
     * empty.
     */
    @Test
    void reusedTablesKeepOnlyTheirOwnIntervalsWrites() throws IOException {
        ChangeBuffer buffer = new ChangeBuffer(Long.MAX_VALUE, deduplicator);
        int[] keys = {20_000, 50, 20_000, 3, 200_000, 1_000, 10, 5, 2, 20_000, 7};
        for (int round = 0; round < keys.length; round++) {
            assertLatestKept(buffer, 3 * keys[round] + round, keys[round]);
        }
    }

    /**
     * Few entries, each rewritten many times with values whose lengths change: replaced records
     * pile up in the partitions until they are compacted away, and no latest record may go with
     * them.
     */
    @Test
    void valuesThatChangeLengthReplaceTheirEntriesRecords() throws IOException {
        ChangeBuffer buffer = new ChangeBuffer(Long.MAX_VALUE, deduplicator);
        for (int round = 0; round < 3; round++) {
            assertLatestKept(buffer, 300_000 + round, 500, true);
        }
    }

    /**
     * One interval writes a large value to every partition: their arenas grow to hold them, and go
     * with the interval once it is recycled; large values take no pooled chunks.
     */
    @Test
    void aBurstOfLargeValuesLeavesNoTablesBehind() throws IOException {
        ChangeBuffer buffer = new ChangeBuffer(Long.MAX_VALUE, deduplicator);
        String large = "x".repeat(1 << 20);
        for (int key = 0; key < IntervalWrites.PARTITIONS; key++) {
            buffer.write(0, key, key, VoidNamespace.INSTANCE, large, KEYS, NAMESPACES, VALUES);
        }
        IntervalWrites drained = buffer.drain();
        List<Integer> lengths = new ArrayList<>();
        drained.forEachLatest((bytes, offset, length) -> lengths.add(length));
        assertThat(lengths).hasSize(IntervalWrites.PARTITIONS).allMatch(length -> length > 1 << 20);
        drained.recycle();
        assertThat(buffer.heapBytes()).isLessThan(16L << 20);
    }

    /**
     * An interval that wrote to three key groups holds the tables of three partitions, each
     * small, not of all of them: a TaskManager runs many keyed operators, most writing little
     * per checkpoint interval.
     */
    @Test
    void anIntervalOfFewWritesHoldsFewSmallTables() throws IOException {
        ChangeBuffer buffer = new ChangeBuffer(Long.MAX_VALUE, deduplicator);
        for (int keyGroup = 0; keyGroup < 3; keyGroup++) {
            buffer.write(0, keyGroup, keyGroup, VoidNamespace.INSTANCE, "v", KEYS, NAMESPACES, VALUES);
        }
        IntervalWrites drained = buffer.drain();
        assertThat(drained.distinctCount()).isEqualTo(3);
        assertThat(drained.heapBytes()).isPositive().isLessThan(3 * (8 << 10));
        drained.recycle();
    }

    /**
     * A busy interval's tables hold its records with little slack: 200 000 distinct entries of
     * 118-byte records cost at most a quarter more than the records, plus the table's slots (at
     * most half full: 21 bytes per entry here) and the records' places (4 bytes and a quarter).
     * Arenas that double and an array of record lengths besides the places cost 199 bytes.
     */
    @Test
    void aBusyIntervalHoldsItsRecordsWithLittleSlack() throws IOException {
        ChangeBuffer buffer = new ChangeBuffer(Long.MAX_VALUE, deduplicator);
        int keys = 200_000;
        String value = "x".repeat(100);
        for (int key = 0; key < keys; key++) {
            buffer.write(0, key % 128, key, VoidNamespace.INSTANCE, value, KEYS, NAMESPACES, VALUES);
        }
        int record = 118;
        assertThat(buffer.bytes()).isEqualTo((long) keys * record);
        IntervalWrites drained = buffer.drain();
        assertThat(drained.distinctCount()).isEqualTo(keys);
        double perEntry = (double) drained.heapBytes() / keys;
        assertThat(perEntry).isLessThan(record * 1.25 + 21 + Integer.BYTES * 1.25);
        drained.recycle();
    }

    /**
     * The chunks of a drained interval come back to the pool; while the tracker pauses the buffer
     * keeps none, not even those of an interval drained before the pause and handed back after it.
     */
    @Test
    void aBufferThatKeepsNoSparesLetsItsChunksGo() throws IOException {
        ChangeBuffer buffer = new ChangeBuffer(Long.MAX_VALUE, deduplicator);
        writeAndDrain(buffer, 10_000, "v");
        assertThat(buffer.heapBytes()).isPositive();
        for (int key = 0; key < 10_000; key++) {
            buffer.write(0, key % 128, key, VoidNamespace.INSTANCE, "w", KEYS, NAMESPACES, VALUES);
        }
        IntervalWrites drained = buffer.drain();
        buffer.keepSpares(false);
        assertThat(buffer.heapBytes()).isZero();
        assertThat(drained.distinctCount()).isEqualTo(10_000);
        drained.recycle();
        assertThat(buffer.heapBytes()).isZero();
        buffer.keepSpares(true);
        writeAndDrain(buffer, 10_000, "x");
        assertThat(buffer.heapBytes()).isPositive();
    }

    /**
     * What the background thread deduplicated is a lower bound of the distinct entries that the
     * barrier may trust without counting: never above the count, and near it once the chunks of
     * many rewrites of few keys are sorted (the estimate extrapolates, the bound does not).
     */
    @Test
    void theDeduplicatedEntriesAreALowerBoundOfTheDistinctCount() throws Exception {
        ChangeBuffer buffer = new ChangeBuffer(Long.MAX_VALUE, deduplicator);
        for (int i = 0; i < 300_000; i++) {
            int key = i % 5_000;
            buffer.write(0, key % 128, key, VoidNamespace.INSTANCE, "v" + i, KEYS, NAMESPACES, VALUES);
        }
        deduplicator.submit(() -> {}).get(); // the chunks handed over are sorted
        IntervalWrites drained = buffer.drain();
        long atLeast = drained.distinctAtLeast();
        assertThat(atLeast).isBetween(1L, 5_000L);
        assertThat(drained.distinctCount()).isEqualTo(5_000);
        drained.recycle();

        IntervalWrites none = buffer.drain();
        assertThat(none.distinctAtLeast()).isZero();
        none.recycle();
    }

    /** Writes {@code value} to keys 0 to {@code keys - 1}, each in key group key % 128; drains. */
    private static void writeAndDrain(ChangeBuffer buffer, int keys, String value)
            throws IOException {
        for (int key = 0; key < keys; key++) {
            buffer.write(0, key % 128, key, VoidNamespace.INSTANCE, value, KEYS, NAMESPACES, VALUES);
        }
        IntervalWrites drained = buffer.drain();
        assertThat(drained.distinctCount()).isEqualTo(keys);
        drained.recycle();
    }

    /**
     * Sorting a chunk fails on the background thread: the interval's records are lost, and say so
     * when read; the next interval's are whole.
     */
    @Test
    void aFailureInTheBackgroundLosesTheIntervalNotTheBuffer() throws Exception {
        ChangeBuffer buffer = new ChangeBuffer(Long.MAX_VALUE, deduplicator);
        buffer.write(0, 1, 1, VoidNamespace.INSTANCE, "before", KEYS, NAMESPACES, VALUES);
        ChangeBufferFaults.appendMalformedRecord(buffer);
        for (int key = 0; key < 10_000; key++) {
            buffer.write(0, key % 128, key, VoidNamespace.INSTANCE, "after", KEYS, NAMESPACES, VALUES);
        }
        deduplicator.submit(() -> {}).get(); // the chunks handed over are sorted
        IntervalWrites drained = buffer.drain();
        assertThat(drained.lostRecords()).as("found by the background thread").isTrue();
        assertThat(drained.distinctCount()).isZero();
        assertThatThrownBy(() -> drained.forEachLatest((bytes, at, length) -> {}))
                .isInstanceOf(IOException.class)
                .hasMessageContaining("lost")
                .hasCauseInstanceOf(ArrayIndexOutOfBoundsException.class);
        drained.recycle();
        assertLatestKept(buffer, 100_000);
    }

    /** Deduplicating in place, on the task thread, fails: likewise. */
    @Test
    void aFailureWhileDeduplicatingInPlaceLosesTheIntervalNotTheBuffer() throws IOException {
        ChangeBuffer buffer = new ChangeBuffer(1L << 16, task -> {});
        ChangeBufferFaults.appendMalformedRecord(buffer);
        for (int key = 0; key < 10_000; key++) {
            buffer.write(0, key % 128, key, VoidNamespace.INSTANCE, "v", KEYS, NAMESPACES, VALUES);
        }
        IntervalWrites drained = buffer.drain();
        assertThat(drained.lostRecords()).isTrue();
        assertThatThrownBy(() -> drained.forEachLatest((bytes, at, length) -> {}))
                .isInstanceOf(IOException.class);
        drained.recycle();
        assertLatestKept(buffer, 100_000);
    }

    private static void assertLatestKept(ChangeBuffer buffer, int writes) throws IOException {
        assertLatestKept(buffer, writes, 20_000);
    }

    private static void assertLatestKept(ChangeBuffer buffer, int writes, int keys) throws IOException {
        assertLatestKept(buffer, writes, keys, false);
    }

    /**
     * Writes to 2 states x {@code keys} keys, removals and records larger than a chunk, in a random
     * order; values of 1 to 200 characters if {@code varyLengths}.
     */
    private static void assertLatestKept(ChangeBuffer buffer, int writes, int keys, boolean varyLengths)
            throws IOException {
        Map<String, String> expected = new HashMap<>();
        Random random = new Random(writes);
        String big = "x".repeat(ChangeBuffer.CHUNK_BYTES + 10);
        for (int i = 0; i < writes; i++) {
            int state = random.nextInt(2);
            int key = random.nextInt(keys);
            int roll = random.nextInt(1000);
            String value =
                    roll < 100
                            ? null
                            : roll == 999 ? big + i : varyLengths ? "v".repeat(random.nextInt(200)) + i : "v" + i;
            buffer.write(state, key % 128, key, VoidNamespace.INSTANCE, value, KEYS, NAMESPACES, VALUES);
            expected.put(state + "/" + key, value == null ? "<removed>" : value);
        }
        IntervalWrites drained = buffer.drain();
        Map<String, String> latest = new HashMap<>();
        DataInputDeserializer in = new DataInputDeserializer();
        drained.forEachLatest(
                (bytes, at, length) -> {
                    try {
                        in.setBuffer(bytes, IntervalWrites.keyOffset(at), IntervalWrites.keyLength(bytes, at));
                        int key = IntSerializer.INSTANCE.deserialize(in);
                        assertThat(IntervalWrites.keyGroup(bytes, at)).isEqualTo(key % 128);
                        String value = null;
                        if (IntervalWrites.valueLength(bytes, at) >= 0) {
                            in.setBuffer(bytes, IntervalWrites.valueOffset(bytes, at), IntervalWrites.valueLength(bytes, at));
                            value = StringSerializer.INSTANCE.deserialize(in);
                        }
                        String previous = latest.put(IntervalWrites.stateId(bytes, at) + "/" + key, value == null ? "<removed>" : value);
                        assertThat(previous).as("one record per entry").isNull();
                    } catch (IOException e) {
                        throw new AssertionError(e);
                    }
                });
        drained.recycle();
        assertThat(latest).isEqualTo(expected);
        assertThat(buffer.drain().recordCount()).isZero();
    }
}
