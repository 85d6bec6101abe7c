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

package org.appendlog.cec.log;

import java.io.DataInput;
import java.io.DataOutput;
import java.io.IOException;
import java.io.Serializable;
import java.util.Objects;

/** A byte position in one subtask's persisted stream: a segment file name and an offset in it. */
public final class LogPosition implements Serializable {

    private static final long serialVersionUID = 1L;

    private final String segment;
    private final long offset;

    public LogPosition(String segment, long offset) {
        this.segment = Objects.requireNonNull(segment);
        this.offset = offset;
    }

    /** File name of the segment, relative to the subtask's log directory. */
    public String segment() {
        return segment;
    }

    public long offset() {
        return offset;
    }

    public void write(DataOutput out) throws IOException {
        out.writeUTF(segment);
        out.writeLong(offset);
    }

    /** Reads what {@link #write} wrote: a file name of the subtask's directory and an offset. */
    public static LogPosition read(DataInput in) throws IOException {
        String segment = in.readUTF();
        long offset = in.readLong();
        if (segment.isEmpty() || segment.contains("/") || offset < 0) {
            throw new IOException("Impossible CEC log position '" + segment + "' @ " + offset);
        }
        return new LogPosition(segment, offset);
    }

    @Override
    public boolean equals(Object o) {
        if (!(o instanceof LogPosition)) {
            return false;
        }
        LogPosition that = (LogPosition) o;
        return offset == that.offset && segment.equals(that.segment);
    }

    @Override
    public int hashCode() {
        return Objects.hash(segment, offset);
    }

    @Override
    public String toString() {
        return segment + "@" + offset;
    }
}
