package org.appendlog.cec.log;

import org.apache.flink.core.fs.FSDataOutputStream;
import org.apache.flink.core.fs.FileStatus;
import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;

import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.util.ArrayList;
import java.util.List;

/**
 * Names the CEC operator that writes a subtask directory: a file {@code owner-<operator id>}
 * holding the operator's name. Two operators configured with one log path would commit over each
 * other; {@link #claim} lets them find out.
 */
public final class OwnerMarker {

    private static final String PREFIX = "owner-";

    private final String operatorId;
    private final String operatorName;

    public OwnerMarker(String operatorId, String operatorName) {
        this.operatorId = operatorId;
        this.operatorName = operatorName;
    }

    /**
     * Writes this owner's marker into {@code directory} unless it is there already (a restore or
     * restart of the same operator), then returns the markers of any other owners. Every owner
     * writes before it looks, so of two operators that start at the same time at least the one
     * that looks last sees the other: no atomic create-if-absent is needed, which Flink's local
     * file system does not offer. An owner that finds another removes the marker it has just
     * written, so that a misconfigured operator does not block the restore of the directory's
     * rightful owner.
     */
    public static List<OwnerMarker> claim(FileSystem fs, Path directory, OwnerMarker self) throws IOException {
        Path own = new Path(directory, PREFIX + self.operatorId);
        boolean written = !fs.exists(own);
        if (written) {
            write(fs, own, self);
        }
        List<OwnerMarker> others = new ArrayList<>();
        for (FileStatus child : fs.listStatus(directory)) {
            String name = child.getPath().getName();
            if (name.startsWith(PREFIX) && !name.equals(own.getName())) {
                try (DataInputStream in = new DataInputStream(fs.open(child.getPath()))) {
                    others.add(new OwnerMarker(name.substring(PREFIX.length()), in.readUTF()));
                }
            }
        }
        if (written && !others.isEmpty()) {
            fs.delete(own, false);
        }
        return others;
    }

    /** Written under a temporary name and renamed, so a reader never sees a torn marker. */
    private static void write(FileSystem fs, Path own, OwnerMarker self) throws IOException {
        Path tmp = new Path(own.getParent(), "." + own.getName() + ".inprogress");
        try (FSDataOutputStream raw = fs.create(tmp, FileSystem.WriteMode.OVERWRITE);
                DataOutputStream out = new DataOutputStream(raw)) {
            out.writeUTF(self.operatorName);
            out.flush();
            raw.sync();
        }
        if (!fs.rename(tmp, own) && !fs.exists(own)) {
            throw new IOException("Could not rename CEC owner marker " + tmp + " to " + own);
        }
    }

    @Override
    public String toString() {
        return "operator '" + operatorName + "' (operator id " + operatorId + ")";
    }
}
