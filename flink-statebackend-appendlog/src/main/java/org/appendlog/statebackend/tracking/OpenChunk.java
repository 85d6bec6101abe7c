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

import javax.annotation.Nullable;

import java.util.function.Consumer;

/**
 * The chunk that encoded records are appended to, whole: a record that does not {@link #fit}
 * closes it, so that records never span chunks.
 */
final class OpenChunk {

    @Nullable private byte[] bytes;
    private int used;
    private int records;

    /** Whether a record of {@code length} bytes fits; never if no chunk is open. */
    boolean fits(int length) {
        return bytes != null && used + length <= bytes.length;
    }

    /** Opens {@code empty} to append to; the chunk open before must be closed. */
    void open(byte[] empty) {
        bytes = empty;
        used = 0;
        records = 0;
    }

    /** Records appended since the chunk was opened; 0 if none is open. */
    int records() {
        return bytes == null ? 0 : records;
    }

    void append(byte[] record, int offset, int length) {
        System.arraycopy(record, offset, bytes, used, length);
        used += length;
        records++;
    }

    /**
     * Closes the open chunk and returns what it holds; null if no chunk was open or it held no
     * record, in which case {@code unused} takes its bytes back.
     */
    @Nullable
    Chunk close(Consumer<byte[]> unused) {
        Chunk closed = null;
        if (bytes != null && records > 0) {
            closed = new Chunk(bytes, used, records);
        } else if (bytes != null) {
            unused.accept(bytes);
        }
        bytes = null;
        return closed;
    }
}
