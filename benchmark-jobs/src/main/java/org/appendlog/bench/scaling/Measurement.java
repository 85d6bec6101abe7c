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
