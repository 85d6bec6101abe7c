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

package org.appendlog.statebackend.memory;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

/** Arrays grow by a quarter, to what a record needs if that is more, and no further than Java allows. */
class ArrayGrowthTest {

    @Test
    void growsByAQuarterOrToWhatIsNeeded() {
        assertThat(ArrayGrowth.byAQuarter(0, 0)).isEqualTo(8);
        assertThat(ArrayGrowth.byAQuarter(4096, 0)).isEqualTo(5128);
        assertThat(ArrayGrowth.byAQuarter(4096, 5000)).isEqualTo(5128);
        assertThat(ArrayGrowth.byAQuarter(4096, 70_000)).isEqualTo(70_000);
    }

    @Test
    void stopsAtTheLargestArrayAndSaysWhenThatIsNotEnough() {
        int largest = Integer.MAX_VALUE - 8;
        assertThat(ArrayGrowth.byAQuarter(2_000_000_000, 0)).isEqualTo(largest);
        assertThat(ArrayGrowth.byAQuarter(2_000_000_000, largest)).isEqualTo(largest);
        assertThatThrownBy(() -> ArrayGrowth.byAQuarter(largest, largest + 1L))
                .isInstanceOf(IllegalStateException.class)
                .hasMessageContaining(Long.toString(largest + 1L));
    }
}
