package org.appendlog.cec.log;

import java.io.IOException;

/** A CEC log file that fails its checks; the message names the file and the byte offset. */
public class CorruptCecLogException extends IOException {

    private static final long serialVersionUID = 1L;

    public CorruptCecLogException(Object file, long offset, String problem) {
        super("Corrupt CEC log " + file + " at offset " + offset + ": " + problem);
    }

    public CorruptCecLogException(Object file, long offset, String problem, Throwable cause) {
        super("Corrupt CEC log " + file + " at offset " + offset + ": " + problem, cause);
    }
}
