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

/** The words of the generated vocabulary: word {@code i} is spelled {@code "w" + i}. */
public final class Words {

    private Words() {}

    public static String spell(int id) {
        return "w" + id;
    }

    /** The id of a word spelled by {@link #spell}; parsing is cheaper than a map from word to id. */
    public static int idOf(String word) {
        return Integer.parseInt(word, 1, word.length(), 10);
    }
}
