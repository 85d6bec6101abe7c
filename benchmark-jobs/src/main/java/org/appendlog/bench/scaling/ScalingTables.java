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

import java.util.ArrayList;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * The sweep's tables: a row per configuration (backend, keys, parallelism) in the order first
 * measured, each cell the median of its repetitions with their range in brackets, "-" where
 * nothing was measured; and the raw CSV, a row per repetition.
 */
final class ScalingTables {

    private ScalingTables() {}

    static String markdown(List<Measurement> measurements, List<String> columns) {
        StringBuilder md = new StringBuilder("| backend | keys | parallelism");
        StringBuilder rule = new StringBuilder("| --- | ---: | ---:");
        for (String column : columns) {
            md.append(" | ").append(column);
            rule.append(" | ---:");
        }
        md.append(" |\n").append(rule).append(" |\n");
        for (List<Measurement> repetitions : byConfiguration(measurements).values()) {
            Measurement first = repetitions.get(0);
            md.append("| ").append(first.backend)
                    .append(" | ").append(first.keys)
                    .append(" | ").append(first.parallelism);
            for (String column : columns) {
                md.append(" | ").append(cell(repetitions, column));
            }
            md.append(" |\n");
        }
        return md.toString();
    }

    static String csv(List<Measurement> measurements, List<String> columns) {
        StringBuilder csv = new StringBuilder("backend,keys,parallelism,repetition");
        columns.forEach(c -> csv.append(',').append(c));
        csv.append('\n');
        for (Measurement m : measurements) {
            csv.append(m.backend).append(',').append(m.keys).append(',')
                    .append(m.parallelism).append(',').append(m.repetition);
            for (String column : columns) {
                Double value = m.figures.get(column);
                csv.append(',').append(value == null ? "" : number(value));
            }
            csv.append('\n');
        }
        return csv.toString();
    }

    /** "median (min-max)" of the repetitions that measured {@code column}; the value alone for one. */
    static String cell(List<Measurement> repetitions, String column) {
        List<Double> values = new ArrayList<>();
        for (Measurement m : repetitions) {
            Double value = m.figures.get(column);
            if (value != null) {
                values.add(value);
            }
        }
        if (values.isEmpty()) {
            return "-";
        }
        Collections.sort(values);
        String median = number(median(values));
        return values.size() == 1
                ? median
                : median + " (" + number(values.get(0)) + "-" + number(values.get(values.size() - 1)) + ")";
    }

    /** The median of sorted {@code values}: the middle one, or the mean of the middle two. */
    static double median(List<Double> values) {
        int n = values.size();
        return n % 2 == 1 ? values.get(n / 2) : (values.get(n / 2 - 1) + values.get(n / 2)) / 2;
    }

    /** Whole numbers from 100 on, one decimal below. */
    static String number(double value) {
        return String.format(Locale.ROOT, Math.abs(value) >= 100 ? "%.0f" : "%.1f", value);
    }

    private static Map<String, List<Measurement>> byConfiguration(List<Measurement> measurements) {
        Map<String, List<Measurement>> groups = new LinkedHashMap<>();
        for (Measurement m : measurements) {
            groups.computeIfAbsent(m.configuration(), k -> new ArrayList<>()).add(m);
        }
        return groups;
    }
}
