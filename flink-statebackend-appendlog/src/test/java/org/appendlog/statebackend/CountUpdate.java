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

package org.appendlog.statebackend;

/** What the per-key counting job emits: the key's count after one record, and who counted it. */
public class CountUpdate {

    public int key;
    public long count;
    /** The attempt number of the counting subtask: it grows by one with every restart. */
    public int attempt;

    public CountUpdate() {}

    public CountUpdate(int key, long count, int attempt) {
        this.key = key;
        this.count = count;
        this.attempt = attempt;
    }

    @Override
    public String toString() {
        return "(" + key + ", " + count + ", attempt " + attempt + ")";
    }
}
