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

import java.util.LinkedHashMap;
import java.util.Map;

/** One repetition of one configuration of the sweep and its figures, by column name. */
final class Measurement {

    final String backend;
    final int keys;
    final int parallelism;
    final int repetition;
    final Map<String, Double> figures = new LinkedHashMap<>();

    Measurement(String backend, int keys, int parallelism, int repetition) {
        this.backend = backend;
        this.keys = keys;
        this.parallelism = parallelism;
        this.repetition = repetition;
    }

    Measurement put(String column, double value) {
        figures.put(column, value);
        return this;
    }

    /** The configuration, the same in every repetition. */
    String configuration() {
        return backend + " " + keys + " " + parallelism;
    }
}
