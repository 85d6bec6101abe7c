package org.appendlog.statebackend.log;

import java.io.IOException;

/** A batch that fails its checks; the message names the file and the byte offset. */
public class CorruptLogException extends IOException {

    private static final long serialVersionUID = 1L;

    public CorruptLogException(String file, long offset, String problem) {
        this(file, "offset " + offset, problem);
    }

    /** {@code position} as {@link KeyGroupRecords#positionOf} gives it. */
    public CorruptLogException(String file, String position, String problem) {
        super("Corrupt state log " + file + " at " + position + ": " + problem);
    }
}
