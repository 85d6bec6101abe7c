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

package org.appendlog.cec.operator;

import org.appendlog.cec.log.LogPosition;

import javax.annotation.Nullable;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/**
 * All a CEC operator subtask keeps in Flink state: which stream it writes (its subtask and
 * generation), where that stream ended at the checkpoint, how many windows were open there and
 * where the oldest footprint of those windows lies (the recovery horizon), whether the stream logs
 * the input, plus the two clocks that must not go backwards. Its size does not depend on the
 * number of windows.
 */
public final class CheckpointedPosition {

    /** Versions 1 (no horizon, no input) and 2 (no generation) are still read. */
    private static final int VERSION = 3;

    final int subtask;
    final int parallelism;
    /** The generation of the subtask's stream: 0 for the first, 0 in bytes before version 3. */
    final long generation;
    final LogPosition end;
    final long segmentSequence;
    final int openWindows;
    final long streamTime;
    final long watermark;
    /** Null in version 1 bytes. */
    @Nullable final LogPosition horizon;
    /** Whether the stream holds INPUT records: recovery replays them from {@link #horizon}. */
    final boolean inputLogged;

    CheckpointedPosition(
            int subtask,
            int parallelism,
            long generation,
            LogPosition end,
            long segmentSequence,
            int openWindows,
            long streamTime,
            long watermark,
            @Nullable LogPosition horizon,
            boolean inputLogged) {
        this.subtask = subtask;
        this.parallelism = parallelism;
        this.generation = generation;
        this.end = end;
        this.segmentSequence = segmentSequence;
        this.openWindows = openWindows;
        this.streamTime = streamTime;
        this.watermark = watermark;
        this.horizon = horizon;
        this.inputLogged = inputLogged;
    }

    /**
     * The oldest log position that recovery from this checkpoint reads: the first byte of the
     * oldest footprint of a window open at the checkpoint, or the end if none was open. Segments
     * that end before it are history only. Null for a checkpoint written before horizons were
     * recorded.
     */
    @Nullable
    public LogPosition recoveryHorizon() {
        return horizon;
    }

    byte[] toBytes() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(96);
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(VERSION);
        out.writeInt(subtask);
        out.writeInt(parallelism);
        out.writeLong(generation);
        end.write(out);
        out.writeLong(segmentSequence);
        out.writeInt(openWindows);
        out.writeLong(streamTime);
        out.writeLong(watermark);
        horizon.write(out);
        out.writeBoolean(inputLogged);
        out.flush();
        return bytes.toByteArray();
    }

    public static CheckpointedPosition fromBytes(byte[] bytes) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
        int version = in.readInt();
        if (version < 1 || version > VERSION) {
            throw new IOException("Unknown CEC operator state version " + version + " (expected 1 to " + VERSION + ")");
        }
        int subtask = in.readInt();
        int parallelism = in.readInt();
        long generation = version < 3 ? 0 : in.readLong();
        LogPosition end = LogPosition.read(in);
        long segmentSequence = in.readLong();
        int openWindows = in.readInt();
        long streamTime = in.readLong();
        long watermark = in.readLong();
        LogPosition horizon = version == 1 ? null : LogPosition.read(in);
        boolean inputLogged = version != 1 && in.readBoolean();
        return new CheckpointedPosition(
                subtask, parallelism, generation, end, segmentSequence, openWindows, streamTime, watermark, horizon, inputLogged);
    }

    @Override
    public String toString() {
        return "subtask " + subtask + "/" + parallelism + " of generation " + generation + " at " + end + " with " + openWindows
                + " open windows, recovery horizon " + horizon;
    }
}
