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

package org.appendlog.bench.scaling;

import org.junit.jupiter.api.Test;

import java.util.List;

import static org.assertj.core.api.Assertions.assertThat;

class ScalingTablesTest {

    @Test
    void aCellIsTheMedianOfItsRepetitionsWithTheirRange() {
        List<Measurement> repetitions =
                List.of(
                        new Measurement("appendlog", 1000, 1, 1).put("ms", 300),
                        new Measurement("appendlog", 1000, 1, 2).put("ms", 120.4),
                        new Measurement("appendlog", 1000, 1, 3).put("ms", 4.25));

        assertThat(ScalingTables.cell(repetitions, "ms")).isEqualTo("120 (4.3-300)");
        assertThat(ScalingTables.cell(repetitions.subList(0, 2), "ms")).isEqualTo("210 (120-300)");
        assertThat(ScalingTables.cell(repetitions.subList(2, 3), "ms")).isEqualTo("4.3");
        assertThat(ScalingTables.cell(repetitions, "missing")).isEqualTo("-");
    }

    @Test
    void rowsGroupTheRepetitionsOfAConfigurationInTheOrderFirstMeasured() {
        List<Measurement> measurements =
                List.of(
                        new Measurement("hashmap", 250000, 2, 1).put("a", 1).put("b", 10),
                        new Measurement("appendlog", 250000, 2, 1).put("a", 2),
                        new Measurement("hashmap", 250000, 2, 2).put("a", 3).put("b", 30));

        assertThat(ScalingTables.markdown(measurements, List.of("a", "b")))
                .isEqualTo(
                        "| backend | keys | parallelism | a | b |\n"
                                + "| --- | ---: | ---: | ---: | ---: |\n"
                                + "| hashmap | 250000 | 2 | 2.0 (1.0-3.0) | 20.0 (10.0-30.0) |\n"
                                + "| appendlog | 250000 | 2 | 2.0 | - |\n");
        assertThat(ScalingTables.csv(measurements, List.of("a", "b")))
                .isEqualTo(
                        "backend,keys,parallelism,repetition,a,b\n"
                                + "hashmap,250000,2,1,1.0,10.0\n"
                                + "appendlog,250000,2,1,2.0,\n"
                                + "hashmap,250000,2,2,3.0,30.0\n");
    }
}
