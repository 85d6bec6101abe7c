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

/**
 * Makes deduplicating a change buffer fail, as running out of memory while growing a table would:
 * a record whose key length points past its chunk.
 */
final class ChangeBufferFaults {

    private ChangeBufferFaults() {}

    /** Appends a malformed record to the buffer of {@code tracker}. */
    static void appendMalformedRecord(ChangeTracker tracker) {
        appendMalformedRecord(tracker.buffer());
    }

    static void appendMalformedRecord(ChangeBuffer buffer) {
        byte[] record = new byte[IntervalWrites.HEADER_BYTES + 4];
        record[4] = 0x10; // key and namespace length: 256 MB
        buffer.append(record, 0, record.length);
    }
}
