package org.appendlog.cec.source;

import org.appendlog.cec.log.LogPosition;

/** A split being read: where the next record starts. */
final class CecLogSplitState {

    final CecLogSplit split;
    LogPosition next;

    CecLogSplitState(CecLogSplit split) {
        this.split = split;
        this.next = split.resumeAt();
    }

    CecLogSplit toSplit() {
        return next == null ? split : split.resumingAt(next);
    }
}
