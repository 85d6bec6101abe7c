package org.appendlog.bench.harness;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class JvmHeapTest {

    @Test
    void aFixedPreTouchedHeapIsReady() {
        JvmHeap heap = new JvmHeap(10_000_000_000L, 10_000_000_000L, true);

        assertThat(heap.isReady()).isTrue();
        assertThat(heap.describe()).isEqualTo("JVM heap 10.00 GB initial, 10.00 GB maximum, pre-touched");
    }

    @Test
    void aHeapThatCanGrowIsFlaggedInTheResults() {
        JvmHeap heap = new JvmHeap(400_000_000L, 10_000_000_000L, false);

        assertThat(heap.isReady()).isFalse();
        assertThat(heap.describe())
                .startsWith("JVM heap 400.0 MB initial, 10.00 GB maximum, not pre-touched (throughput")
                .contains("set -Xms equal to -Xmx and -XX:+AlwaysPreTouch");
    }

    @Test
    void aFixedHeapThatIsNotPreTouchedIsFlaggedToo() {
        JvmHeap heap = new JvmHeap(10_000_000_000L, 10_000_000_000L, false);

        assertThat(heap.isReady()).isFalse();
        assertThat(heap.describe()).contains("not pre-touched (throughput");
    }

    @Test
    void thisJvmsHeapIsRead() {
        JvmHeap heap = JvmHeap.ofThisJvm();

        assertThat(heap.describe()).startsWith("JVM heap ").contains(" maximum");
    }
}
