package org.appendlog.bench.harness;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class JvmHeapTest {

    @Test
    void aHeapThatStartsAtItsMaximumIsFixed() {
        JvmHeap heap = new JvmHeap(10_000_000_000L, 10_000_000_000L);

        assertThat(heap.isFixed()).isTrue();
        assertThat(heap.describe()).isEqualTo("JVM heap 10.00 GB initial, 10.00 GB maximum");
    }

    @Test
    void aHeapThatCanGrowIsFlaggedInTheResults() {
        JvmHeap heap = new JvmHeap(400_000_000L, 10_000_000_000L);

        assertThat(heap.isFixed()).isFalse();
        assertThat(heap.describe())
                .startsWith("JVM heap 400.0 MB initial, 10.00 GB maximum (not fixed:")
                .contains("set -Xms equal to -Xmx");
    }
}
