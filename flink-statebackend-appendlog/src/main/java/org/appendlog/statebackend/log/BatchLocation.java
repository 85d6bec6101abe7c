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

package org.appendlog.statebackend.log;

import org.apache.flink.core.memory.DataInputDeserializer;
import org.apache.flink.core.memory.DataOutputView;
import org.apache.flink.runtime.state.KeyGroupRange;

import java.io.IOException;
import java.util.Collection;
import java.util.HashSet;
import java.util.LinkedHashSet;
import java.util.Set;

/** Where one batch lives: its segment, byte range, checkpoint id and key-group range. */
public final class BatchLocation {

    private final String segment;
    private final long offset;
    private final long length;
    /** The length with the records uncompressed: what the index counts. Not written. */
    private final long rawLength;
    private final long checkpointId;
    private final long minCheckpointId;
    private final KeyGroupRange keyGroups;

    /** A batch as a manifest lists it: its raw length is known once its header is read. */
    public BatchLocation(
            String segment,
            long offset,
            long length,
            long checkpointId,
            long minCheckpointId,
            KeyGroupRange keyGroups) {
        this(segment, offset, length, length, checkpointId, minCheckpointId, keyGroups);
    }

    public BatchLocation(
            String segment,
            long offset,
            long length,
            long rawLength,
            long checkpointId,
            long minCheckpointId,
            KeyGroupRange keyGroups) {
        this.segment = segment;
        this.offset = offset;
        this.length = length;
        this.rawLength = rawLength;
        this.checkpointId = checkpointId;
        this.minCheckpointId = minCheckpointId;
        this.keyGroups = keyGroups;
    }

    public String segment() {
        return segment;
    }

    public long offset() {
        return offset;
    }

    /** The bytes the batch takes in its segment. */
    public long length() {
        return length;
    }

    /**
     * The batch's length with its records uncompressed, as written or read from its header (a
     * location read from a manifest gives its stored length until then): the index counts raw
     * record bytes, so it counts batches by this length too.
     */
    public long rawLength() {
        return rawLength;
    }

    public long checkpointId() {
        return checkpointId;
    }

    /** No record of this batch is older than this checkpoint. */
    public long minCheckpointId() {
        return minCheckpointId;
    }

    /** Identifies the batch: no two batches share segment and offset. */
    public String key() {
        return segment + "@" + offset;
    }

    public KeyGroupRange keyGroups() {
        return keyGroups;
    }

    /** The segments that {@code batches} lie in, in the order of their first batch. */
    public static Set<String> segmentsOf(Collection<BatchLocation> batches) {
        Set<String> segments = new LinkedHashSet<>();
        batches.forEach(b -> segments.add(b.segment()));
        return segments;
    }

    /** The {@link #key() keys} of {@code batches}. */
    public static Set<String> keysOf(Collection<BatchLocation> batches) {
        Set<String> keys = new HashSet<>();
        batches.forEach(b -> keys.add(b.key()));
        return keys;
    }

    public void write(DataOutputView out) throws IOException {
        out.writeUTF(segment);
        out.writeLong(offset);
        out.writeLong(length);
        out.writeLong(checkpointId);
        out.writeLong(minCheckpointId);
        out.writeInt(keyGroups.getStartKeyGroup());
        out.writeInt(keyGroups.getEndKeyGroup());
    }

    /** The fewest bytes {@link #write} takes: an empty segment name. */
    public static final int MIN_WRITTEN_BYTES = 2 + 4 * 8 + 2 * 4;

    /**
     * Reads what {@link #write} wrote, at the position {@code in} is at in {@code file}, checking
     * what a batch's location must be: inside a segment, after its header, of valid key groups.
     */
    public static BatchLocation read(DataInputDeserializer in, String file) throws IOException {
        int at = in.getPosition();
        String segment = in.readUTF();
        long offset = in.readLong();
        long length = in.readLong();
        long checkpointId = in.readLong();
        long minCheckpointId = in.readLong();
        KeyGroupRange keyGroups =
                BatchFormat.keyGroups(in.readInt(), in.readInt(), file, in.getPosition() - 8);
        if (segment.isEmpty()
                || offset < BatchFormat.SEGMENT_HEADER_BYTES
                || length <= 0
                || length > Long.MAX_VALUE - offset) {
            throw new CorruptLogException(
                    file,
                    at,
                    "impossible batch location: segment '"
                            + segment
                            + "', offset "
                            + offset
                            + ", length "
                            + length);
        }
        return new BatchLocation(
                segment, offset, length, checkpointId, minCheckpointId, keyGroups);
    }

    @Override
    public String toString() {
        return segment + "@" + offset + "+" + length + " (checkpoint " + checkpointId + ")";
    }
}
