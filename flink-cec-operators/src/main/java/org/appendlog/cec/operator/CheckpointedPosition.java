package org.appendlog.cec.operator;

import org.appendlog.cec.log.LogPosition;

import java.io.ByteArrayInputStream;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;

/**
 * All a CEC operator subtask keeps in Flink state: where its stream ended at the checkpoint and
 * how many windows were open there, plus the two clocks that must not go backwards. Its size does
 * not depend on the number of windows.
 */
final class CheckpointedPosition {

    private static final int VERSION = 1;

    final int subtask;
    final int parallelism;
    final LogPosition end;
    final long segmentSequence;
    final int openWindows;
    final long streamTime;
    final long watermark;

    CheckpointedPosition(
            int subtask,
            int parallelism,
            LogPosition end,
            long segmentSequence,
            int openWindows,
            long streamTime,
            long watermark) {
        this.subtask = subtask;
        this.parallelism = parallelism;
        this.end = end;
        this.segmentSequence = segmentSequence;
        this.openWindows = openWindows;
        this.streamTime = streamTime;
        this.watermark = watermark;
    }

    byte[] toBytes() throws IOException {
        ByteArrayOutputStream bytes = new ByteArrayOutputStream(96);
        DataOutputStream out = new DataOutputStream(bytes);
        out.writeInt(VERSION);
        out.writeInt(subtask);
        out.writeInt(parallelism);
        end.write(out);
        out.writeLong(segmentSequence);
        out.writeInt(openWindows);
        out.writeLong(streamTime);
        out.writeLong(watermark);
        out.flush();
        return bytes.toByteArray();
    }

    static CheckpointedPosition fromBytes(byte[] bytes) throws IOException {
        DataInputStream in = new DataInputStream(new ByteArrayInputStream(bytes));
        int version = in.readInt();
        if (version != VERSION) {
            throw new IOException("Unknown CEC operator state version " + version + " (expected " + VERSION + ")");
        }
        return new CheckpointedPosition(
                in.readInt(),
                in.readInt(),
                LogPosition.read(in),
                in.readLong(),
                in.readInt(),
                in.readLong(),
                in.readLong());
    }

    @Override
    public String toString() {
        return "subtask " + subtask + "/" + parallelism + " at " + end + " with " + openWindows + " open windows";
    }
}
