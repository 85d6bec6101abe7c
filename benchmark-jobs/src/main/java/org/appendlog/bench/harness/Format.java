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

package org.appendlog.bench.harness;

import java.util.Locale;

/** How figures are printed in the progress line, the Markdown table and the charts. */
final class Format {

    private Format() {}

    /** 1234567 as "1.23 M", 45600 as "45.6 k"; negative values (not measured) as "-". */
    static String count(double value) {
        if (value < 0) {
            return "-";
        }
        if (value >= 1e6) {
            return String.format(Locale.ROOT, "%.2f M", value / 1e6);
        }
        if (value >= 1e3) {
            return String.format(Locale.ROOT, "%.1f k", value / 1e3);
        }
        return String.format(Locale.ROOT, "%.0f", value);
    }

    static String bytes(long value) {
        if (value < 0) {
            return "-";
        }
        if (value >= 1_000_000_000L) {
            return String.format(Locale.ROOT, "%.2f GB", value / 1e9);
        }
        if (value >= 1_000_000) {
            return String.format(Locale.ROOT, "%.1f MB", value / 1e6);
        }
        if (value >= 1_000) {
            return String.format(Locale.ROOT, "%.1f kB", value / 1e3);
        }
        return value + " B";
    }

    /** CPU microseconds per record, to two decimals; negative values (not measured) as "-". */
    static String micros(double value) {
        return value < 0 ? "-" : String.format(Locale.ROOT, "%.2f", value);
    }

    static String millis(long value) {
        return value < 0 ? "-" : Long.toString(value);
    }
}
