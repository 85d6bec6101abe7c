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
