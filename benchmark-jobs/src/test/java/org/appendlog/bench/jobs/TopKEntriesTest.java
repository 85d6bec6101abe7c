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

package org.appendlog.bench.jobs;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;

class TopKEntriesTest {

    @Test
    void keepsTheBestKByCountThenLowerWordId() {
        long[] top = TopKEntries.EMPTY;
        top = TopKEntries.insert(top, 3, 5, 10);
        top = TopKEntries.insert(top, 3, 7, 30);
        top = TopKEntries.insert(top, 3, 2, 10);
        top = TopKEntries.insert(top, 3, 9, 1);
        top = TopKEntries.insert(top, 3, 1, 20);
        assertThat(top).containsExactly(7, 30, 1, 20, 2, 10);
        assertThat(TopKEntries.format(top)).isEqualTo("[w7=30, w1=20, w2=10]");
    }
}
