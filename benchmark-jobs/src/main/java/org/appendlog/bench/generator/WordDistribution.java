package org.appendlog.bench.generator;

import java.util.Locale;

/** How the generator picks a word id from a uniform random number after the optional first pass. */
public enum WordDistribution {
    /**
     * A hot set: a share of the updates ({@code hotShare}) goes uniformly to the first {@code
     * hotFraction} of the vocabulary, the rest uniformly to the other words.
     */
    HOTSET,
    /**
     * Zipf with exponent {@code skew}: word id {@code r} (rank {@code r + 1}) is drawn with weight
     * about {@code 1 / (r + 1)^skew}, through the inverse of the continuous Zipf CDF, so no table
     * over the vocabulary is needed.
     */
    ZIPF,
    /** Every word equally likely. */
    UNIFORM;

    public static WordDistribution parse(String name) {
        try {
            return valueOf(name.trim().toUpperCase(Locale.ROOT));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException(
                    "Unknown word distribution '" + name + "': use hotset, zipf or uniform.");
        }
    }
}
