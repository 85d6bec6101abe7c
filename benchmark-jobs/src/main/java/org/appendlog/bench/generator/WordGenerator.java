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

import java.io.Serializable;

/**
 * The deterministic word stream of the benchmark jobs. Record number {@code g} of the whole stream
 * (over all parallel source instances) is a pure function of the seed and {@code g}, so any reader
 * can recompute what the sources emitted, in any order, to verify a job's result.
 *
 * <p>With {@code firstPass}, records {@code 0 .. vocabulary-1} are each word once, in order (every
 * key is written once before the skewed updates start); after that the {@link WordDistribution}
 * decides.
 */
public final class WordGenerator implements Serializable {

    private static final long serialVersionUID = 1L;

    private final int vocabulary;
    private final WordDistribution distribution;
    private final double skew;
    private final double hotFraction;
    private final double hotShare;
    private final boolean firstPass;
    private final long seed;

    private final int hotWords;

    public WordGenerator(
            int vocabulary,
            WordDistribution distribution,
            double skew,
            double hotFraction,
            double hotShare,
            boolean firstPass,
            long seed) {
        if (vocabulary < 1) {
            throw new IllegalArgumentException("vocabulary must be at least 1, got " + vocabulary);
        }
        if (!(hotFraction > 0 && hotFraction <= 1)) {
            throw new IllegalArgumentException("hot fraction must be in (0, 1], got " + hotFraction);
        }
        if (!(hotShare >= 0 && hotShare <= 1)) {
            throw new IllegalArgumentException("hot share must be in [0, 1], got " + hotShare);
        }
        if (!(skew > 0)) {
            throw new IllegalArgumentException("Zipf skew must be positive, got " + skew);
        }
        this.vocabulary = vocabulary;
        this.distribution = distribution;
        this.skew = skew;
        this.hotFraction = hotFraction;
        this.hotShare = hotShare;
        this.firstPass = firstPass;
        this.seed = seed;
        this.hotWords = Math.max(1, (int) Math.round(vocabulary * hotFraction));
    }

    public int vocabulary() {
        return vocabulary;
    }

    /** How many records the first pass (every word once) takes; 0 without one. */
    public long firstPassRecords() {
        return firstPass ? vocabulary : 0;
    }

    /** The word id of record {@code g} of the whole stream. */
    public int wordIdAt(long g) {
        if (firstPass && g < vocabulary) {
            return (int) g;
        }
        long bits = mix(seed ^ mix(g + 0x9E3779B97F4A7C15L));
        switch (distribution) {
            case HOTSET:
                return hotSet(bits);
            case ZIPF:
                return zipf(unit(bits));
            default:
                return (int) (unit(bits) * vocabulary);
        }
    }

    private int hotSet(long bits) {
        // the high 32 bits decide hot or cold, the low 32 bits pick the word within the set
        double which = (bits >>> 32) / 4294967296.0;
        double pick = (bits & 0xFFFFFFFFL) / 4294967296.0;
        if (which < hotShare || hotWords == vocabulary) {
            return (int) (pick * hotWords);
        }
        return hotWords + (int) (pick * (vocabulary - hotWords));
    }

    private int zipf(double u) {
        // inverse CDF of the continuous density ~ x^-skew on [1, vocabulary + 1)
        double n = vocabulary + 1.0;
        double x;
        if (Math.abs(skew - 1.0) < 1e-9) {
            x = Math.pow(n, u);
        } else {
            double a = 1.0 - skew;
            x = Math.pow((Math.pow(n, a) - 1.0) * u + 1.0, 1.0 / a);
        }
        return Math.min(vocabulary - 1, (int) x - 1);
    }

    /** A uniform double in [0, 1) from 53 random bits. */
    private static double unit(long bits) {
        return (bits >>> 11) * 0x1.0p-53;
    }

    /** SplitMix64's finalizer: a bijective mix, so distinct record numbers get independent words. */
    private static long mix(long z) {
        z = (z ^ (z >>> 30)) * 0xBF58476D1CE4E5B9L;
        z = (z ^ (z >>> 27)) * 0x94D049BB133111EBL;
        return z ^ (z >>> 31);
    }

    @Override
    public String toString() {
        String shape =
                distribution == WordDistribution.HOTSET
                        ? String.format(
                                "hotset %.0f%% of updates on %.0f%% of keys",
                                hotShare * 100, hotFraction * 100)
                        : distribution == WordDistribution.ZIPF
                                ? "zipf skew " + skew
                                : "uniform";
        return vocabulary + " words, " + shape + (firstPass ? ", each word once first" : "")
                + ", seed " + seed;
    }
}
