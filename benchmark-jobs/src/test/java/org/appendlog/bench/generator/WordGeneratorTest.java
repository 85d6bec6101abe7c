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

package org.appendlog.bench.generator;

import org.junit.jupiter.api.Test;

import static org.assertj.core.api.Assertions.assertThat;
import static org.assertj.core.api.Assertions.assertThatThrownBy;

class WordGeneratorTest {

    @Test
    void firstPassWritesEveryWordOnceInOrder() {
        WordGenerator generator = new WordGenerator(1000, WordDistribution.HOTSET, 1, 0.1, 0.9, true, 7);
        for (int g = 0; g < 1000; g++) {
            assertThat(generator.wordIdAt(g)).isEqualTo(g);
        }
    }

    @Test
    void hotSetGetsItsShareOfTheUpdates() {
        WordGenerator generator = new WordGenerator(100_000, WordDistribution.HOTSET, 1, 0.1, 0.9, false, 7);
        int hot = 0;
        int draws = 1_000_000;
        for (int g = 0; g < draws; g++) {
            int id = generator.wordIdAt(g);
            assertThat(id).isBetween(0, 99_999);
            if (id < 10_000) {
                hot++;
            }
        }
        assertThat(hot / (double) draws).isBetween(0.895, 0.905);
    }

    @Test
    void zipfRanksAreOrderedByFrequency() {
        WordGenerator generator = new WordGenerator(1000, WordDistribution.ZIPF, 1.0, 0.1, 0.9, false, 7);
        int[] counts = new int[1000];
        for (int g = 0; g < 1_000_000; g++) {
            counts[generator.wordIdAt(g)]++;
        }
        assertThat(counts[0]).isGreaterThan(counts[1]);
        assertThat(counts[1]).isGreaterThan(counts[9]);
        assertThat(counts[9]).isGreaterThan(counts[99]);
        // the most frequent word of Zipf(1) over 1000 words has about 1/ln(1001) = 14% of the draws
        assertThat(counts[0] / 1e6).isBetween(0.08, 0.2);
    }

    @Test
    void theStreamIsAFunctionOfSeedAndRecordNumber() {
        WordGenerator a = new WordGenerator(50_000, WordDistribution.UNIFORM, 1, 0.1, 0.9, false, 1);
        WordGenerator b = new WordGenerator(50_000, WordDistribution.UNIFORM, 1, 0.1, 0.9, false, 1);
        WordGenerator other = new WordGenerator(50_000, WordDistribution.UNIFORM, 1, 0.1, 0.9, false, 2);
        int differs = 0;
        for (long g = 0; g < 10_000; g++) {
            assertThat(a.wordIdAt(g)).isEqualTo(b.wordIdAt(g));
            if (a.wordIdAt(g) != other.wordIdAt(g)) {
                differs++;
            }
        }
        assertThat(differs).isGreaterThan(9_900);
    }

    @Test
    void badOptionsAreRejectedNamingTheOption() {
        assertThatThrownBy(() -> new WordGenerator(0, WordDistribution.HOTSET, 1, 0.1, 0.9, true, 1))
                .hasMessageContaining("vocabulary");
        assertThatThrownBy(() -> WordDistribution.parse("gauss")).hasMessageContaining("hotset, zipf or uniform");
    }

    @Test
    void sourceSharesAddUpToTheTotal() {
        for (int p = 1; p <= 4; p++) {
            long sum = 0;
            for (int i = 0; i < p; i++) {
                sum += WordSource.shareOf(1003, i, p);
            }
            assertThat(sum).isEqualTo(1003);
        }
    }
}
