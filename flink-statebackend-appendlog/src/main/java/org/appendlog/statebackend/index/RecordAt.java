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

package org.appendlog.statebackend.index;

/**
 * Where one record is, as the index keeps it: segment number, batch number in the segment,
 * position among the batch's record bytes of the record's key group, and length. Mutable and
 * reused record after record, so that indexing a batch allocates nothing per record.
 */
final class RecordAt {

    int segment;
    int batch;
    int position;
    int length;

    RecordAt set(int segment, int batch, int position, int length) {
        this.segment = segment;
        this.batch = batch;
        this.position = position;
        this.length = length;
        return this;
    }

    /** The record at {@code position} of this place's batch, {@code length} bytes. */
    RecordAt record(int position, int length) {
        this.position = position;
        this.length = length;
        return this;
    }
}
