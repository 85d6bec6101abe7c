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
