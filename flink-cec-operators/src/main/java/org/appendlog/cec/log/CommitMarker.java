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

/**
 * A commit marker's content: the end of a subtask's stream as of a completed checkpoint, and the
 * Flink job that wrote it (so that a restart of the same job can be told from a new job).
 */
public final class CommitMarker {

    private final long checkpointId;
    private final LogPosition end;
    private final String jobId;

    public CommitMarker(long checkpointId, LogPosition end, String jobId) {
        this.checkpointId = checkpointId;
        this.end = end;
        this.jobId = jobId;
    }

    public long checkpointId() {
        return checkpointId;
    }

    public LogPosition end() {
        return end;
    }

    public String jobId() {
        return jobId;
    }

    void write(DataOutput out) throws IOException {
        out.writeLong(checkpointId);
        end.write(out);
        out.writeUTF(jobId);
    }

    static CommitMarker read(DataInput in) throws IOException {
        return new CommitMarker(in.readLong(), LogPosition.read(in), in.readUTF());
    }

    @Override
    public String toString() {
        return "commit of checkpoint " + checkpointId + " by job " + jobId + " at " + end;
    }
}
