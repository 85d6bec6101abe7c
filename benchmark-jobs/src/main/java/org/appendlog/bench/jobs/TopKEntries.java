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

import org.appendlog.bench.generator.Words;

/**
 * A top-K list as a flat {@code long[]} of (word id, count) pairs, best first: higher count first,
 * on equal counts the lower word id. A primitive array keeps the state and the records cheap to
 * serialize on every backend.
 */
public final class TopKEntries {

    private TopKEntries() {}

    public static final long[] EMPTY = new long[0];

    /** Returns {@code entries} with (wordId, count) inserted in order and cut to {@code k} pairs. */
    public static long[] insert(long[] entries, int k, long wordId, long count) {
        int size = entries.length / 2;
        int at = size;
        while (at > 0 && better(wordId, count, entries[2 * (at - 1)], entries[2 * (at - 1) + 1])) {
            at--;
        }
        if (at >= k) {
            return entries;
        }
        int newSize = Math.min(k, size + 1);
        long[] result = new long[2 * newSize];
        System.arraycopy(entries, 0, result, 0, 2 * at);
        result[2 * at] = wordId;
        result[2 * at + 1] = count;
        System.arraycopy(entries, 2 * at, result, 2 * at + 2, 2 * (newSize - at - 1));
        return result;
    }

    private static boolean better(long id, long count, long otherId, long otherCount) {
        return count > otherCount || (count == otherCount && id < otherId);
    }

    public static String format(long[] entries) {
        StringBuilder text = new StringBuilder("[");
        for (int i = 0; i < entries.length; i += 2) {
            text.append(i == 0 ? "" : ", ")
                    .append(Words.spell((int) entries[i]))
                    .append('=')
                    .append(entries[i + 1]);
        }
        return text.append(']').toString();
    }
}
