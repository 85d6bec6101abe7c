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

package org.appendlog.statebackend.tracking;

/** A filled chunk of encoded records: the bytes used in it and the records they hold. */
final class Chunk {

    final byte[] bytes;
    final int used;
    final int records;

    Chunk(byte[] bytes, int used, int records) {
        this.bytes = bytes;
        this.used = used;
        this.records = records;
    }
}
