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
