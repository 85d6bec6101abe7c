package org.appendlog.cec.operator;

import org.appendlog.cec.api.CecRecord;
import org.appendlog.cec.api.CecRecordKind;
import org.appendlog.cec.api.CecRecordSerializer;
import org.appendlog.cec.log.BackwardLogReader;
import org.appendlog.cec.log.LogPosition;
import org.appendlog.cec.log.LogRecord;

import org.apache.flink.core.fs.FileSystem;
import org.apache.flink.core.fs.Path;
import org.apache.flink.core.memory.DataInputDeserializer;

import java.io.IOException;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;

/**
 * The CEC recovery scan: reads a subtask's stream backwards from a checkpointed position and
 * collects the latest footprint of every window that was open there. The newest tuple of a window
 * decides: a RESULT means the window had closed, an OPEN or CHECK is its state. The scan stops as
 * soon as it has {@code n} open windows, so its length depends on how old the oldest footprint
 * is, which is what the CEC policy keeps short, not on the size of the log.
 */
public final class WindowRecovery<K, W, ACC, OUT> {

    private final List<CecRecord<K, W, ACC, OUT>> footprints;
    private final long recordsScanned;
    private final long bytesRead;

    private WindowRecovery(List<CecRecord<K, W, ACC, OUT>> footprints, long recordsScanned, long bytesRead) {
        this.footprints = footprints;
        this.recordsScanned = recordsScanned;
        this.bytesRead = bytesRead;
    }

    public static <K, W, ACC, OUT> WindowRecovery<K, W, ACC, OUT> scan(
            FileSystem fs,
            Path directory,
            LogPosition end,
            int openWindows,
            CecRecordSerializer<K, W, ACC, OUT> serializer)
            throws IOException {
        List<CecRecord<K, W, ACC, OUT>> found = new ArrayList<>(openWindows);
        Set<OpenWindow.Id<K, W>> decided = new HashSet<>();
        DataInputDeserializer in = new DataInputDeserializer();
        long scanned = 0;
        try (BackwardLogReader reader = new BackwardLogReader(fs, directory, end)) {
            while (found.size() < openWindows) {
                LogRecord record = reader.previous();
                if (record == null) {
                    throw new IOException(
                            "CEC recovery scan of " + directory + " from " + end + " reached the start of the "
                                    + "stream with " + found.size() + " of " + openWindows
                                    + " open windows found; the log is incomplete");
                }
                scanned++;
                in.setBuffer(record.payload());
                CecRecord<K, W, ACC, OUT> tuple = serializer.deserialize(in);
                if (decided.add(new OpenWindow.Id<>(tuple.getKey(), tuple.getWindow()))
                        && tuple.getKind() != CecRecordKind.RESULT) {
                    found.add(tuple);
                }
            }
            return new WindowRecovery<>(found, scanned, reader.bytesRead());
        }
    }

    /** The latest footprint (OPEN or CHECK) of each window open at the scanned position. */
    public List<CecRecord<K, W, ACC, OUT>> footprints() {
        return footprints;
    }

    public long recordsScanned() {
        return recordsScanned;
    }

    public long bytesRead() {
        return bytesRead;
    }
}
