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

import java.io.IOException;
import java.util.function.ObjLongConsumer;

/** What a storage holds right now, entry by entry (a file, a table cell), each with its size in bytes. */
interface StoredEntries {

    /**
     * Passes every entry's unique name and size to {@code entry}. Entries deleted while being
     * listed may be missed or fail the listing; the next listing sees the rest.
     */
    void list(ObjLongConsumer<String> entry) throws IOException;
}
