package org.appendlog.cec.source;

import org.appendlog.cec.log.LogPosition;
import org.appendlog.cec.log.LogRecord;

/** A record read from the log together with the position of the record after it. */
final class PositionedRecord {

    final LogRecord record;
    final LogPosition next;

    PositionedRecord(LogRecord record, LogPosition next) {
        this.record = record;
        this.next = next;
    }
}
