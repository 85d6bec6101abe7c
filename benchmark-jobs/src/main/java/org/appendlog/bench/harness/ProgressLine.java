package org.appendlog.bench.harness;

import java.io.PrintStream;

/**
 * One status line while a configuration runs: redrawn in place on a terminal, or printed every few
 * seconds when the output is a log (CI), so logs stay short.
 */
public final class ProgressLine {

    private static final long LOG_EVERY_NANOS = 5_000_000_000L;

    private final PrintStream out;
    private final boolean terminal;
    private long lastPrinted;
    private int lastLength;

    public ProgressLine(PrintStream out) {
        this.out = out;
        this.terminal = System.console() != null;
    }

    public void update(String status) {
        if (terminal) {
            String padded = status.length() < lastLength
                    ? status + " ".repeat(lastLength - status.length())
                    : status;
            out.print("\r" + padded);
            out.flush();
            lastLength = status.length();
        } else if (System.nanoTime() - lastPrinted > LOG_EVERY_NANOS) {
            out.println("  " + status);
            lastPrinted = System.nanoTime();
        }
    }

    /** Ends the line with a final statement that stays. */
    public void done(String summary) {
        if (terminal) {
            update("");
            out.print("\r");
        }
        out.println(summary);
        lastPrinted = 0;
        lastLength = 0;
    }
}
